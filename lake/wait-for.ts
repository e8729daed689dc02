import type { DatasetSource, FileSource, S3Source } from '../platform/lake-config/dataset-source.js';
import { DEFAULT_WAIT_FOR_MS } from '../platform/lake-protocol.js';
import type { ObjectRef } from '../platform/lake-protocol.js';
import { LakeError } from './errors.js';
import type { Lake } from './lake.js';
import { bareEtag, isDataFile } from './sources/index.js';

/**
 * A query's `waitFor` (docs/adr/0010-durable-incremental-lake.md): each named object is looked
 * at in its source at once (no event needed) and applied, then the query runs; when that cannot
 * happen within the wait, 504 `not_applied` names the object and why.
 */

/** How soon to look again at an object that was not there yet (an upload may still be landing). */
const RETRY_MS = 250;

interface Holder {
  dataset: string;
  key: string;
}

function s3Key(source: S3Source, ref: ObjectRef): string | undefined {
  if (ref.bucket !== undefined && ref.bucket !== source.bucket) return undefined;
  if (!source.isPrefix) return ref.key === source.key ? ref.key : undefined;
  const relative = ref.key.startsWith(source.key) ? ref.key.slice(source.key.length) : undefined;
  return relative !== undefined && isDataFile(relative) ? ref.key : undefined;
}

function fileKey(source: FileSource, ref: ObjectRef): string | undefined {
  const base = source.path.slice(source.path.lastIndexOf('/') + 1);
  const relative = ref.key.startsWith(source.path) ? ref.key.slice(source.path.length) : ref.key;
  if (!source.isDirectory) return relative === base || ref.key === source.path ? base : undefined;
  return isDataFile(relative) && !relative.split('/').includes('..') ? relative : undefined;
}

/** The key of `ref` as the dataset's catalog names it, when its source holds such a key. */
function keyIn(source: DatasetSource, ref: ObjectRef): string | undefined {
  if (source.connector === 's3') return s3Key(source, ref);
  if (source.connector === 'file') return fileKey(source, ref);
  const url = new URL(source.url);
  const display = `${url.origin}${url.pathname}`;
  return ref.key === display || ref.key === source.url ? display : undefined;
}

const described = (ref: ObjectRef): string =>
  `${ref.bucket === undefined ? '' : `s3://${ref.bucket}/`}${ref.key}${ref.etag === undefined ? '' : ` (ETag ${bareEtag(ref.etag) ?? ''})`}`;

/** The datasets that hold `ref`; 400 when the bucket was left out and datasets of several buckets hold the key. */
export function holdersOf(
  ref: ObjectRef,
  sources: readonly { name: string; source: DatasetSource }[],
): Holder[] {
  const holders: Holder[] = [];
  const buckets = new Set<string>();
  for (const { name, source } of sources) {
    const key = keyIn(source, ref);
    if (key === undefined) continue;
    holders.push({ dataset: name, key });
    if (source.connector === 's3') buckets.add(source.bucket);
  }
  if (ref.bucket === undefined && buckets.size > 1)
    throw new LakeError(
      'bad_request',
      `waitFor ${ref.key}: datasets of several buckets hold this key; name its bucket`,
    );
  return holders;
}

/** Why the object is not (yet) in the table, after the lake last looked. */
function reasonFor(lake: Lake, holder: Holder, etag: string | undefined): string | undefined {
  const failure = lake.failureOf(holder.dataset);
  const stored = lake.storedObject(holder.dataset, holder.key);
  if (stored !== undefined && (etag === undefined || stored.etag === etag)) return undefined;
  if (failure !== undefined) return `the load failed: ${failure}`;
  if (stored === undefined) return 'absent from the source';
  return `the source holds another version (ETag ${stored.etag ?? 'unknown'})`;
}

/**
 * Looks at the object in its source (a newer upload of a key the table holds counts) until the
 * table has it; answers why not when the deadline passes first.
 */
async function applied(
  lake: Lake,
  holder: Holder,
  etag: string | undefined,
  deadline: number,
): Promise<string | undefined> {
  if (etag !== undefined && lake.storedObject(holder.dataset, holder.key)?.etag === etag) return undefined;
  let reason: string | undefined;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) return reason ?? 'not applied in time';
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      lake.ensureObject(holder.dataset, holder.key).then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => {
          resolve(true);
        }, left);
      }),
    ]);
    clearTimeout(timer);
    reason = timedOut ? (reason ?? 'not applied in time') : reasonFor(lake, holder, etag);
    if (reason === undefined || timedOut) return reason;
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(RETRY_MS, Math.max(0, deadline - Date.now()))),
    );
  }
}

/** Applies each object of `refs` (all at once) or throws 504 not_applied naming the first that was not. */
export async function waitForObjects(
  lake: Lake,
  refs: readonly ObjectRef[],
  waitTimeoutMs?: number,
): Promise<void> {
  const timeoutMs = waitTimeoutMs ?? DEFAULT_WAIT_FOR_MS;
  const deadline = Date.now() + timeoutMs;
  const sources = lake.datasetSources();
  const held = refs.map((ref) => ({ ref, holders: holdersOf(ref, sources) }));
  // Waiting cannot help an object outside every dataset's source: a mistake in the request.
  const unheld = held.filter(({ holders }) => holders.length === 0).map(({ ref }) => described(ref));
  if (unheld.length > 0)
    throw new LakeError(
      'bad_request',
      `waitFor: no dataset's source holds ${unheld.slice(0, 5).join(', ')} (name the bucket and the full key)`,
    );
  const checks = held.map(async ({ ref, holders }) => {
    const etag = bareEtag(ref.etag);
    const reasons = await Promise.all(holders.map((holder) => applied(lake, holder, etag, deadline)));
    const reason = reasons.find((candidate) => candidate !== undefined);
    return reason === undefined ? undefined : `${described(ref)}: ${reason}`;
  });
  const failures = (await Promise.all(checks)).filter((reason) => reason !== undefined);
  if (failures.length > 0)
    throw new LakeError(
      'not_applied',
      `not applied within ${timeoutMs} ms: ${failures.slice(0, 5).join('; ')}`,
    );
}
