import {
  ARTIFACTS_CHANGED_ANNOTATION,
  ARTIFACT_UPLOADS_OPEN_UNTIL_ANNOTATION,
  ARTIFACTS_UNCHANGED,
  AgentComputerType,
} from '../../../crds/index.js';
import type { ResourceStore } from '../../../platform/store/types.js';

/**
 * How long after a signed upload URL expired its upload still counts as possible: the API server's
 * clock wrote the expiry, this process's clock reads it.
 */
const CLOCK_SKEW_MS = 60_000;

/** Workspaces whose last sync is remembered (the least recently synced forgotten first: it syncs again). */
const REMEMBERED = 10_000;

/** What the workspace said of its artifacts in object storage when a sync began. */
export interface StoreSideMark {
  uid: string;
  /** ARTIFACTS_CHANGED_ANNOTATION: ARTIFACTS_UNCHANGED, or undefined when not known (a workspace not made by Agentry). */
  changed: string | undefined;
  /** Signed upload URLs may still be used (ARTIFACT_UPLOADS_OPEN_UNTIL_ANNOTATION). */
  uploadsOpen: boolean;
}

/**
 * Whether the store's side of a workspace's artifacts may hold what the workspace has not: only the
 * API server changes it between syncs (api/agent-computer/artifacts/changes.ts marks the
 * AgentComputer after each change), so a prompt is dispatched without a sync — an object-store
 * listing and a runner round trip, on the way of every prompt — when nothing was marked since the
 * last sync. The mark is read from the API server, not the cache: a client's upload answered before
 * it sent the prompt is then always seen. What this process synced is kept in memory; after a
 * restart the first prompt of each workspace syncs.
 */
export class StoreSideChanges {
  private readonly synced = new Map<string, StoreSideMark>();

  constructor(
    private readonly store: ResourceStore,
    private readonly now: () => number = Date.now,
  ) {}

  /** The workspace's mark now; undefined when it is gone (nothing to push into). */
  async read(namespace: string, workspace: string): Promise<StoreSideMark | undefined> {
    const ac = await this.store.get(AgentComputerType, namespace, workspace);
    if (ac === undefined) {
      this.synced.delete(`${namespace}/${workspace}`);
      return undefined;
    }
    const annotations = ac.metadata.annotations ?? {};
    const openUntil = Date.parse(annotations[ARTIFACT_UPLOADS_OPEN_UNTIL_ANNOTATION] ?? '');
    return {
      uid: ac.metadata.uid ?? '',
      changed: annotations[ARTIFACTS_CHANGED_ANNOTATION],
      uploadsOpen: !Number.isNaN(openUntil) && openUntil + CLOCK_SKEW_MS > this.now(),
    };
  }

  /** Whether a sync must push before a prompt: the store changed since the last sync here, or may change at any moment. */
  owed(namespace: string, workspace: string, mark: StoreSideMark): boolean {
    if (mark.uploadsOpen) return true;
    if (mark.changed === ARTIFACTS_UNCHANGED) return false;
    const last = this.synced.get(`${namespace}/${workspace}`);
    return last?.uid !== mark.uid || last.changed !== mark.changed;
  }

  /** A sync that began with `mark` ended: what was marked before it is in the workspace. */
  record(namespace: string, workspace: string, mark: StoreSideMark): void {
    const key = `${namespace}/${workspace}`;
    this.synced.delete(key); // re-inserted last: the map's order is the order of the syncs
    this.synced.set(key, mark);
    const oldest = this.synced.keys().next();
    if (this.synced.size > REMEMBERED && oldest.done !== true) this.synced.delete(oldest.value);
  }
}
