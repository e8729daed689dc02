import { AgentComputerType, LAST_PREVIEW_AT_ANNOTATION } from '../../../crds/index.js';
import type { AgentComputer } from '../../../crds/index.js';
import type { Logger } from '../../../platform/log.js';
import type { ResourceStore } from '../../../platform/store/types.js';
import { updateWithRetry } from '../../optimistic-update.js';

/** Traffic stamps the workspace at most this often: the idle timeout is minutes, not seconds. */
const STAMP_EVERY_MS = 60_000;
/** Past this many remembered stamps, those older than STAMP_EVERY_MS (which decide nothing) are dropped. */
const SWEEP_ABOVE = 1024;

/**
 * Proxied traffic keeps a workspace awake: the annotation `agentry.dev/last-preview-at` is stamped
 * (at most once a minute per workspace and API process, in the background) and the operator's idle
 * deadline counts from it.
 */
export class PreviewActivity {
  private readonly stampedAt = new Map<string, number>();

  constructor(
    private readonly store: ResourceStore,
    private readonly logger: Logger,
    private readonly now: () => Date,
  ) {}

  /** How many workspaces' stamps are remembered: at most those stamped within a minute, once past SWEEP_ABOVE. */
  get remembered(): number {
    return this.stampedAt.size;
  }

  record(ac: AgentComputer): void {
    const key = `${ac.metadata.namespace ?? ''}/${ac.metadata.name}`;
    const now = this.now();
    const last =
      this.stampedAt.get(key) ?? Date.parse(ac.metadata.annotations?.[LAST_PREVIEW_AT_ANNOTATION] ?? '');
    if (Number.isFinite(last) && now.getTime() - last < STAMP_EVERY_MS) return;
    if (this.stampedAt.size >= SWEEP_ABOVE) this.forgetOlderThan(now.getTime() - STAMP_EVERY_MS);
    this.stampedAt.set(key, now.getTime());
    const stamp = now.toISOString();
    updateWithRetry(this.store, AgentComputerType, ac.metadata.namespace, ac.metadata.name, (current) =>
      current.metadata.uid !== ac.metadata.uid
        ? undefined
        : {
            ...current,
            metadata: {
              ...current.metadata,
              annotations: { ...current.metadata.annotations, [LAST_PREVIEW_AT_ANNOTATION]: stamp },
            },
          },
    ).catch((err: unknown) => {
      this.logger.warn({ err, agentComputer: ac.metadata.name }, 'stamping preview activity failed');
    });
  }

  /** An older stamp decides nothing: the workspace's own annotation (in the cache) says as much. */
  private forgetOlderThan(cutoff: number): void {
    for (const [key, at] of this.stampedAt) if (at < cutoff) this.stampedAt.delete(key);
  }
}
