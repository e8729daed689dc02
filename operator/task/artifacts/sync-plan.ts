import type { ArtifactBase, ArtifactBaseEntry } from '../../../platform/runner-protocol.js';

/** One side's view of a path: the runner's content MD5, or the store's (unquoted) ETag. */
export interface RunnerSide {
  md5: string;
  size: number;
}
export interface StoreSide {
  etag: string;
  size: number;
}

/**
 * What a sync does with one path:
 * - `upload`: the workspace changed it: runner → store.
 * - `deleteFromStore`: the workspace deleted it.
 * - `download`: the API changed it: store → runner.
 * - `deleteFromRunner`: the API deleted it.
 * - `agree`: both sides already hold the same bytes; only the base learns it.
 * - `forget`: both sides deleted it; only the base forgets it.
 */
export type SyncAction =
  | { kind: 'upload'; path: string; md5: string; size: number }
  | { kind: 'deleteFromStore'; path: string }
  | { kind: 'download'; path: string; etag: string; size: number }
  | { kind: 'deleteFromRunner'; path: string }
  | { kind: 'agree'; path: string; entry: ArtifactBaseEntry }
  | { kind: 'forget'; path: string };

export interface SyncPlan {
  actions: SyncAction[];
  /** Base entries of paths neither side changed: carried over as they are. */
  unchanged: ArtifactBase;
}

/** An S3 ETag with its quotes taken off (`"abc"` → `abc`). */
export const unquoteEtag = (etag: string): string => etag.replace(/^W\//, '').replace(/^"(.*)"$/, '$1');

/** The workspace changed the path since the base: it wins, even over a change through the API. */
function workspaceChange(
  path: string,
  runner: RunnerSide | undefined,
  store: StoreSide | undefined,
): SyncAction {
  if (runner !== undefined) return { kind: 'upload', path, md5: runner.md5, size: runner.size };
  return store === undefined ? { kind: 'forget', path } : { kind: 'deleteFromStore', path };
}

/** Only the store changed the path since the base (an upload or delete through the API). */
function storeChange(path: string, runner: RunnerSide | undefined, store: StoreSide | undefined): SyncAction {
  if (store !== undefined) return { kind: 'download', path, etag: store.etag, size: store.size };
  return runner === undefined ? { kind: 'forget', path } : { kind: 'deleteFromRunner', path };
}

/** One path's decision: three-way, against the base both sides agreed on last time. */
export function planPath(
  path: string,
  runner: RunnerSide | undefined,
  base: ArtifactBaseEntry | undefined,
  store: StoreSide | undefined,
): SyncAction | undefined {
  const runnerChanged = runner?.md5 !== base?.md5;
  const storeChanged = store?.etag !== base?.etag;
  if (!runnerChanged && !storeChanged) return undefined;
  // Both sides hold the same bytes (a single-part ETag is the MD5): nothing to move.
  if (runner !== undefined && runner.md5 === store?.etag)
    return { kind: 'agree', path, entry: { md5: runner.md5, etag: store.etag } };
  return runnerChanged ? workspaceChange(path, runner, store) : storeChange(path, runner, store);
}

/**
 * The three-way sync of a workspace's /code/artifacts with object storage: for every path either
 * side or the base knows, what changed since the base decides the direction. Pure; the order of
 * actions is the paths' order, so a retried sync repeats the same steps.
 */
export function planArtifactSync(
  runner: ReadonlyMap<string, RunnerSide>,
  base: ArtifactBase,
  store: ReadonlyMap<string, StoreSide>,
): SyncPlan {
  const paths = new Set<string>([...runner.keys(), ...Object.keys(base), ...store.keys()]);
  const actions: SyncAction[] = [];
  const unchanged: [string, ArtifactBaseEntry][] = [];
  for (const path of [...paths].sort()) {
    // Own properties only: a file named `__proto__` must not read Object.prototype.
    const baseEntry = Object.hasOwn(base, path) ? base[path] : undefined;
    const action = planPath(path, runner.get(path), baseEntry, store.get(path));
    if (action !== undefined) actions.push(action);
    else if (baseEntry !== undefined) unchanged.push([path, baseEntry]);
  }
  return { actions, unchanged: Object.fromEntries(unchanged) };
}
