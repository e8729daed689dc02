import { useCallback } from 'preact/hooks';
import { useLoaded } from '../../components/use-loaded.js';
import { artifactUrl, listArtifacts } from '../../http/tasks.js';

/** A byte count as people read it. */
function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * The task's workspace's artifacts with download links (same-origin GETs: the session cookie goes
 * along). `version` changes when the list may have (a prompt finished).
 */
export function ArtifactList({ workspaceId, version }: { workspaceId: string; version: number }) {
  const load = useCallback(
    (signal: AbortSignal) => listArtifacts(workspaceId, signal),
    // `version` is a reason to load again, not an input of the request.
    [workspaceId, version],
  );
  const { value, error } = useLoaded(load);
  return (
    <section class="artifacts">
      <h2>Artifacts</h2>
      {error !== undefined && <p class="error">{error.message}</p>}
      {value?.length === 0 && <p class="empty">None yet.</p>}
      {value !== undefined && value.length > 0 && (
        <ul>
          {value.map((artifact) => (
            <li key={artifact.filename}>
              <a
                href={artifactUrl(workspaceId, artifact.filename)}
                download={artifact.filename.split('/').at(-1)}
              >
                {artifact.filename}
              </a>{' '}
              <span class="size">{formatSize(artifact.size)}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
