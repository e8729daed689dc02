import { AgentComputerType, MAX_PREVIEWS } from '../../../crds/index.js';
import type { AgentComputer, WorkspacePreview } from '../../../crds/index.js';
import type { ResourceStore } from '../../../platform/store/types.js';
import { ApiError } from '../../errors.js';
import { updateWithRetry } from '../../optimistic-update.js';

/** The previews of a workspace that have not expired, in the order they were made. */
export const livePreviews = (ac: AgentComputer, now: Date): WorkspacePreview[] =>
  (ac.spec.previews ?? []).filter((preview) => Date.parse(preview.expiresAt) > now.getTime());

/**
 * Rewrites `spec.previews` with optimistic concurrency: expired entries are pruned on every write,
 * then `change` edits the live ones (and may throw a client error, which writes nothing). A
 * workspace deleted, or deleted and made again under the same name, is a 404.
 */
async function rewritePreviews(
  store: ResourceStore,
  ac: AgentComputer,
  now: Date,
  change: (live: WorkspacePreview[]) => WorkspacePreview[],
): Promise<AgentComputer> {
  const updated = await updateWithRetry(
    store,
    AgentComputerType,
    ac.metadata.namespace,
    ac.metadata.name,
    (current) => {
      if (current.metadata.uid !== ac.metadata.uid || current.metadata.deletionTimestamp !== undefined)
        return undefined;
      const { previews: _previous, ...spec } = current.spec;
      const previews = change(livePreviews(current, now));
      return { ...current, spec: previews.length === 0 ? spec : { ...spec, previews } };
    },
  );
  if (
    updated === undefined ||
    updated.metadata.uid !== ac.metadata.uid ||
    updated.metadata.deletionTimestamp !== undefined
  )
    throw ApiError.notFound('Agent computer');
  return updated;
}

/** Adds one preview, within the limit of live previews per workspace. */
export function addPreview(
  store: ResourceStore,
  ac: AgentComputer,
  preview: WorkspacePreview,
  now: Date,
): Promise<AgentComputer> {
  return rewritePreviews(store, ac, now, (live) => {
    if (live.length >= MAX_PREVIEWS)
      throw new ApiError(
        'limit_exceeded',
        `An agent computer may have at most ${MAX_PREVIEWS} live previews; revoke one first`,
      );
    return [...live, preview];
  });
}

/** Revokes one preview: its entry goes, and with it every request its URL would make. 404 when unknown. */
export function removePreview(
  store: ResourceStore,
  ac: AgentComputer,
  previewId: string,
  now: Date,
): Promise<AgentComputer> {
  return rewritePreviews(store, ac, now, (live) => {
    if (!live.some((preview) => preview.id === previewId)) throw ApiError.notFound('Preview');
    return live.filter((preview) => preview.id !== previewId);
  });
}
