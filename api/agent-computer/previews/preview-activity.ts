import { AgentComputerType, LAST_PREVIEW_AT_ANNOTATION } from '../../../crds/index.js';
import type { AgentComputer } from '../../../crds/index.js';
import type { Logger } from '../../../platform/log.js';
import type { ResourceStore } from '../../../platform/store/types.js';
import { updateWithRetry } from '../../optimistic-update.js';

/** Traffic stamps the workspace at most this often: the idle timeout is minutes, not seconds. */
const STAMP_EVERY_MS = 60_000;

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

  record(ac: AgentComputer): void {
    const key = `${ac.metadata.namespace ?? ''}/${ac.metadata.name}`;
    const now = this.now();
    const last =
      this.stampedAt.get(key) ?? Date.parse(ac.metadata.annotations?.[LAST_PREVIEW_AT_ANNOTATION] ?? '');
    if (Number.isFinite(last) && now.getTime() - last < STAMP_EVERY_MS) return;
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
}
