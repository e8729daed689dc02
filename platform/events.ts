import { randomBytes } from 'node:crypto';
import { EventType } from '../crds/index.js';
import type { EventReason, KubeObject } from '../crds/index.js';
import type { Logger } from './log.js';
import type { ResourceStore } from './store/types.js';

export type EventKind = 'Normal' | 'Warning';

/** The same event for the same object is recorded at most once per window: reconcile loops repeat. */
const REPEAT_WINDOW_MS = 60_000;
const MAX_REMEMBERED = 10_000;

/**
 * Records Kubernetes Events on resources for important transitions (what `kubectl describe`
 * shows). Recording never fails the caller: an event that cannot be written is logged and dropped.
 */
export class EventRecorder {
  private readonly recent = new Map<string, number>();

  constructor(
    private readonly store: ResourceStore,
    private readonly options: { component: string; logger: Logger; now?: () => Date },
  ) {}

  async record(object: KubeObject, type: EventKind, reason: EventReason, message: string): Promise<void> {
    const now = this.options.now?.() ?? new Date();
    const namespace = object.metadata.namespace ?? 'default';
    const key = `${object.kind}/${namespace}/${object.metadata.name}/${object.metadata.uid ?? ''}/${reason}/${message}`;
    const last = this.recent.get(key);
    if (last !== undefined && now.getTime() - last < REPEAT_WINDOW_MS) return;
    this.remember(key, now.getTime());
    const time = `${now.toISOString().slice(0, 19)}Z`;
    try {
      await this.store.create(EventType, {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: `${object.metadata.name}.${randomBytes(8).toString('hex')}`, namespace },
        involvedObject: {
          apiVersion: object.apiVersion,
          kind: object.kind,
          name: object.metadata.name,
          ...(object.metadata.namespace === undefined ? {} : { namespace: object.metadata.namespace }),
          ...(object.metadata.uid === undefined ? {} : { uid: object.metadata.uid }),
        },
        type,
        reason,
        message: message.slice(0, 1024),
        count: 1,
        firstTimestamp: time,
        lastTimestamp: time,
        source: { component: this.options.component },
        reportingComponent: this.options.component,
      });
    } catch (err) {
      this.options.logger.warn({ err, reason, object: object.metadata.name }, 'recording an event failed');
    }
  }

  private remember(key: string, at: number): void {
    if (this.recent.size >= MAX_REMEMBERED) this.recent.clear();
    this.recent.set(key, at);
  }
}
