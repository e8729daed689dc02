import { pipeline } from 'node:stream';
import type { Counter } from 'prom-client';
import type { Logger } from '../../../platform/log.js';
import { artifactKey, artifactPrefix } from '../../../platform/objectstore/keys.js';
import { SizeLimit } from '../../../platform/objectstore/size-limit.js';
import type { ObjectStore } from '../../../platform/objectstore/types.js';
import { listAllObjects } from '../../../platform/objectstore/types.js';
import { RunnerRequestError } from '../../../platform/runner-client.js';
import type { RunnerClient } from '../../../platform/runner-client.js';
import type { ArtifactBase, ArtifactBaseEntry } from '../../../platform/runner-protocol.js';
import { planArtifactSync, unquoteEtag } from './sync-plan.js';
import type { RunnerSide, StoreSide, SyncAction } from './sync-plan.js';
import { describeError } from '../../../platform/describe-error.js';

/** Where the counts of a sync go (operator/task/metrics.ts implements it). */
export interface ArtifactSyncMetrics {
  /** Files moved or deleted, by direction (`to_store`, `to_workspace`). */
  files: Counter<'direction'>;
  bytes: Counter<'direction'>;
}

export interface ArtifactSyncTarget {
  runner: RunnerClient;
  store: ObjectStore;
  namespace: string;
  /** The AgentComputer's name. */
  workspace: string;
  logger: Logger;
  metrics?: ArtifactSyncMetrics | undefined;
}

export interface ArtifactSyncResult {
  /** Actions taken (transfers, deletions, base-only agreements). */
  actions: number;
  /** Paths whose action failed: the base keeps their old entry, so the next sync tries again. */
  failures: { path: string; error: string }[];
}

/** A sync that completed only in part; the transfers that worked are recorded in the base. */
export class ArtifactSyncError extends Error {
  override readonly name = 'ArtifactSyncError';
}

/** Every artifact object of the workspace, page by page, as path → store side. */
async function storeSide(store: ObjectStore, prefix: string): Promise<Map<string, StoreSide>> {
  const side = new Map<string, StoreSide>();
  for (const item of await listAllObjects(store, prefix))
    side.set(item.key.slice(prefix.length), { etag: unquoteEtag(item.etag), size: item.size });
  return side;
}

/**
 * `source` with its bytes counted (for the metrics) as they pass. A failing source fails the meter
 * too, so the side that reads it sees the error instead of waiting for ever.
 */
function metered(source: NodeJS.ReadableStream): SizeLimit {
  const meter = new SizeLimit(undefined, 'artifact');
  pipeline(source, meter, () => undefined); // errors reach the reader through `meter`
  return meter;
}

/** MD5 hex (a single-part ETag) as Content-MD5 (base64), so the runner checks what it received. */
const contentMd5Of = (etag: string): string | undefined =>
  /^[0-9a-f]{32}$/.test(etag) ? Buffer.from(etag, 'hex').toString('base64') : undefined;

/** Runner → store, streamed; the base learns the workspace's MD5 and the store's new ETag. */
async function upload(
  target: ArtifactSyncTarget,
  key: string,
  action: { path: string; md5: string },
): Promise<ArtifactBaseEntry | undefined> {
  const body = await target.runner.readArtifact(action.path);
  if (body === undefined) return undefined;
  const meter = metered(body);
  try {
    const info = await target.store.put(key, meter);
    target.metrics?.files.labels('to_store').inc();
    target.metrics?.bytes.labels('to_store').inc(meter.bytes);
    return { md5: action.md5, etag: unquoteEtag(info.etag) };
  } finally {
    body.destroy();
  }
}

/** Store → runner, streamed; the base learns what the runner wrote and the ETag it came from. */
async function download(
  target: ArtifactSyncTarget,
  key: string,
  path: string,
): Promise<ArtifactBaseEntry | undefined> {
  const got = await target.store.get(key);
  if (got === undefined) return undefined;
  const meter = metered(got.body);
  const etag = unquoteEtag(got.info.etag);
  const contentMd5 = contentMd5Of(etag);
  try {
    const written = await target.runner.writeArtifact(path, meter, {
      ...(contentMd5 === undefined ? {} : { contentMd5 }),
    });
    target.metrics?.files.labels('to_workspace').inc();
    target.metrics?.bytes.labels('to_workspace').inc(meter.bytes);
    return { md5: written.md5, etag };
  } finally {
    // A runner that refused early (409, unreachable) read none of it: release the store's connection.
    meter.destroy();
  }
}

/**
 * Carries out one action; answers the path's new base entry, `null` when the path leaves the base,
 * or undefined when the source vanished meanwhile (the old entry stays; the next sync sees it).
 */
async function execute(
  target: ArtifactSyncTarget,
  action: SyncAction,
): Promise<ArtifactBaseEntry | null | undefined> {
  const key = artifactKey(target.namespace, target.workspace, action.path);
  switch (action.kind) {
    case 'agree':
      return action.entry;
    case 'forget':
      return null;
    case 'deleteFromStore':
      await target.store.delete(key);
      target.metrics?.files.labels('to_store').inc();
      return null;
    case 'deleteFromRunner':
      await target.runner.deleteArtifact(action.path);
      target.metrics?.files.labels('to_workspace').inc();
      return null;
    case 'upload':
      return upload(target, key, action);
    case 'download':
      return download(target, key, action.path);
  }
}

const describe = (err: unknown): string => describeError(err, 300);

/**
 * One two-way sync of a workspace's /code/artifacts with object storage (three-way against the
 * base the runner keeps; see sync-plan.ts). The operator moves the bytes, streamed, between the
 * runner's API and the store: docs/architecture.md#the-life-of-a-task says the runner uploads, but the runner holds no
 * credentials and its NetworkPolicy blocks cluster-internal ranges, so an in-cluster store is out
 * of its reach. Idempotent: a crash midway repeats only transfers. Callers serialize per workspace.
 */
export async function syncArtifacts(target: ArtifactSyncTarget): Promise<ArtifactSyncResult> {
  const prefix = artifactPrefix(target.namespace, target.workspace);
  // Both sides at once: a dispatch waits for this sync (uploaded artifacts go in before the prompt).
  const [manifest, stored] = await Promise.all([
    target.runner.listArtifacts(),
    storeSide(target.store, prefix),
  ]);
  const runnerSide = new Map<string, RunnerSide>(
    manifest.files.map((file) => [file.path, { md5: file.md5, size: file.size }]),
  );
  const plan = planArtifactSync(runnerSide, manifest.base, stored);
  if (plan.actions.length === 0) return { actions: 0, failures: [] };
  const next = new Map(Object.entries(plan.unchanged));
  const failures: ArtifactSyncResult['failures'] = [];
  for (const action of plan.actions) {
    const previous = Object.hasOwn(manifest.base, action.path) ? manifest.base[action.path] : undefined;
    let entry: ArtifactBaseEntry | null | undefined;
    try {
      entry = await execute(target, action);
    } catch (err) {
      if (err instanceof RunnerRequestError && (err.status === 400 || err.status === 409)) {
        // A name the workspace cannot hold (the store may have both `a` and `a/b`, or a name the
        // artifact rules refuse): retrying cannot help, and a retry loop would keep the workspace awake.
        target.logger.warn({ path: action.path, err }, 'the workspace cannot hold this artifact; skipped');
      } else {
        failures.push({ path: action.path, error: describe(err) });
      }
      entry = undefined;
    }
    if (entry === null) next.delete(action.path);
    else if (entry !== undefined) next.set(action.path, entry);
    else if (previous !== undefined) next.set(action.path, previous);
  }
  const base: ArtifactBase = Object.fromEntries(next);
  await target.runner.writeArtifactBase(base);
  return { actions: plan.actions.length, failures };
}
