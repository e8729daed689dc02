import { z } from 'zod';
import { SpicepodSchema } from '../crds/context-lake/types.js';

/**
 * The lake server's HTTP API (docs/architecture.md#the-context-lake): the operator pushes configuration and asks for
 * refreshes, the API server proxies SQL. Every route, /healthz included, requires the workload
 * token as `Authorization: Bearer <token>`. Errors: `{ error: { code, message } }`.
 *
 *   GET  /healthz          → { status: "ok" }
 *   PUT  /v1/config        LakeConfigRequest → 202 LakeStatus (loading happens in the background)
 *   GET  /v1/status        → LakeStatus
 *   POST /v1/sql           SqlRequest → 200 SqlResult | 400 sql_error | 413 result_too_large
 *                          | 504 timeout | 503 not_loaded
 *   POST /v1/refresh       RefreshRequest → 202 { accepted: [names] } (unknown names are ignored)
 *
 * Storage and freshness (docs/adr/0010-durable-incremental-lake.md): datasets live in a DuckDB
 * database file on the lake's own disk; a refresh re-fetches only the objects whose ETag changed,
 * S3 events arrive as object `changes` applied row-wise, and each SQL answer says how current
 * the data it read is (`dataAsOf`), optionally after waiting for named objects (`waitFor`).
 *
 * The lake server holds no cluster credentials: the configuration it receives has its
 * `${secrets:...}` references already resolved by the operator.
 */

/** The lake server's port inside a pod or VM. */
export const LAKE_PORT = 8710;

/** AGENTRY_LAKE_MAX_RESULT_BYTES' default: the rows of one SQL answer, as JSON. */
export const DEFAULT_MAX_RESULT_BYTES = 64 * 1024 * 1024;

export const LakeConfigRequestSchema = z.strictObject({
  /** ContextLake metadata.generation the config came from; echoed in status once applied. */
  generation: z.number().int().min(0),
  /** The spicepod with secret references resolved to their values. */
  config: SpicepodSchema,
  /**
   * Opaque to the lake, echoed in status: the operator's digest of the resolved configuration, so
   * that a changed credential (same generation) is seen as a configuration the lake does not have.
   */
  revision: z.string().max(200).optional(),
});
export type LakeConfigRequest = z.input<typeof LakeConfigRequestSchema>;

/** What the lake last did to a dataset's table, and what it cost. */
export const LakeRefreshOutcomeSchema = z.object({
  /** full: every object fetched again; incremental: only changed objects; check: sources compared, nothing changed. */
  kind: z.enum(['full', 'incremental', 'check']),
  /** Why: `load` (first load or a changed definition), `request`, `event`, `interval`, `wake`, `schema` (a new object's columns differ). */
  trigger: z.enum(['load', 'request', 'event', 'interval', 'wake', 'schema']),
  at: z.string(),
  fetchedObjects: z.number().int().min(0),
  fetchedBytes: z.number().int().min(0),
  removedObjects: z.number().int().min(0),
  ms: z.number().min(0),
});
export type LakeRefreshOutcome = z.infer<typeof LakeRefreshOutcomeSchema>;

/** The source objects a dataset's table holds, summarized (a prefix may hold many thousands). */
export const LakeSourceVersionsSchema = z.object({
  objects: z.number().int().min(0),
  /** sha256 over the sorted `key etag` lines: equal digests, equal data. */
  digest: z.string(),
  /** The newest LastModified among them (ISO). */
  newestModified: z.string().optional(),
});
export type LakeSourceVersions = z.infer<typeof LakeSourceVersionsSchema>;

export const LakeDatasetStateSchema = z.object({
  status: z.enum(['pending', 'loading', 'ready', 'refreshing', 'error']),
  error: z.string().optional(),
  rowCount: z.number().int().min(0).optional(),
  /** When the data now served was loaded (first load or last successful refresh). */
  loadedAt: z.string().optional(),
  /** Bytes of the source objects the table holds (as listed by the source). */
  bytes: z.number().int().min(0).optional(),
  /**
   * The data was current with its sources at this time: the last completed load, refresh, source
   * check or applied event (a check that finds nothing changed moves it forward).
   */
  dataAsOf: z.string().optional(),
  sources: LakeSourceVersionsSchema.optional(),
  lastRefresh: LakeRefreshOutcomeSchema.optional(),
});
export type LakeDatasetState = z.infer<typeof LakeDatasetStateSchema>;

export const LakeViewStateSchema = z.object({
  ok: z.boolean(),
  error: z.string().optional(),
});

export const LakeStatusSchema = z.object({
  /** Generation of the config being served (or loaded, when none was applied yet); null before any. */
  generation: z.number().int().nullable(),
  /** The revision of the latest configuration pushed (served, or being loaded); null before any. */
  revision: z.string().nullable().optional(),
  /** True while a config push or a refresh is being loaded. */
  loading: z.boolean(),
  datasets: z.record(z.string(), LakeDatasetStateSchema),
  views: z.record(z.string(), LakeViewStateSchema),
  /** When the last SQL query arrived (the operator pauses the lake after its idle timeout). */
  lastQueryAt: z.string().optional(),
  /** Queries running and waiting now (AGENTRY_LAKE_MAX_CONCURRENT_QUERIES), and refused `busy` since the start. */
  queries: z
    .object({
      running: z.number().int().min(0),
      queued: z.number().int().min(0),
      refused: z.number().int().min(0),
    })
    .optional(),
});
export type LakeStatus = z.infer<typeof LakeStatusSchema>;

/** The longest a query may wait for `waitFor` objects. */
export const MAX_WAIT_FOR_MS = 60_000;
export const DEFAULT_WAIT_FOR_MS = 10_000;

/**
 * An object of a dataset's source: by bucket and key (`bucket` may be left out when only one S3
 * dataset could hold the key), optionally at a given ETag (a newer upload of the same key is a
 * different object). For https and file sources `key` is the URL or the path below the dataset.
 */
export const ObjectRefSchema = z
  .strictObject({
    bucket: z.string().min(1).max(255).optional(),
    key: z.string().min(1).max(1024),
    /** As S3 reports it, quotes optional. */
    etag: z.string().min(1).max(256).optional(),
  })
  .describe('An object of a dataset source: bucket and key, optionally at an ETag');
export type ObjectRef = z.infer<typeof ObjectRefSchema>;

export const SqlRequestSchema = z.strictObject({
  query: z.string().min(1).max(1_000_000),
  /** Default: the server's AGENTRY_LAKE_ROW_LIMIT (10,000). */
  rowLimit: z.number().int().min(1).max(1_000_000).optional(),
  /** Default: the server's AGENTRY_LAKE_QUERY_TIMEOUT. */
  timeoutMs: z.number().int().min(1).max(3_600_000).optional(),
  /** Bytes of the rows' JSON; the smaller of this and the server's AGENTRY_LAKE_MAX_RESULT_BYTES applies. */
  maxResultBytes: z.number().int().min(1).optional(),
  /**
   * Objects the answer must include: the lake checks each against its source at once (fresh on
   * demand, no event needed) and applies it, then runs the query; 504 `not_applied` when that
   * cannot happen within `waitTimeoutMs`.
   */
  waitFor: z.array(ObjectRefSchema).min(1).max(100).optional(),
  /** Bound of the wait for `waitFor`; default 10 s. */
  waitTimeoutMs: z.number().int().min(1).max(MAX_WAIT_FOR_MS).optional(),
});
export type SqlRequest = z.infer<typeof SqlRequestSchema>;

/** docs/api.md#context-lake: one object per row keyed by column name; BIGINTs beyond 2^53 as strings, dates ISO. */
export const SqlResultSchema = z.object({
  rows: z.array(z.record(z.string(), z.unknown())),
  columns: z.array(z.object({ name: z.string(), type: z.string() })),
  /** Rows in `rows` (after the row limit). */
  rowCount: z.number().int().min(0),
  truncated: z.boolean(),
  elapsedMs: z.number().min(0),
  /**
   * For each dataset the query read (directly or through views), when its data was current
   * (its state's `dataAsOf`): how fresh this answer is.
   */
  dataAsOf: z.record(z.string(), z.string()).optional(),
});
export type SqlResult = z.infer<typeof SqlResultSchema>;

/**
 * How a refresh brings a table up to its sources. `auto` (the default): apply the given `changes`
 * row-wise, or without changes compare the sources' ETags and fetch only what changed; `full`:
 * fetch every object again and rebuild the table. Either falls back to `full` when a fetched
 * object's columns do not fit the table.
 */
export const RefreshModeSchema = z.enum(['auto', 'full']);
export type RefreshMode = z.infer<typeof RefreshModeSchema>;

/** An object created or removed in a dataset's bucket, from an S3 event the operator received. */
export const ObjectChangeSchema = z.strictObject({
  dataset: z.string().min(1),
  event: z.enum(['created', 'removed']),
  bucket: z.string().min(1).max(255),
  key: z.string().min(1).max(1024),
  /** From the event record (created only). */
  etag: z.string().max(256).optional(),
  size: z.number().int().min(0).optional(),
  /** S3's per-key ordering token (hex): a change older than the one applied is ignored. */
  sequencer: z.string().max(64).optional(),
  eventTime: z.string().optional(),
});
export type ObjectChange = z.infer<typeof ObjectChangeSchema>;

export const RefreshRequestSchema = z.strictObject({
  datasets: z.array(z.string()).min(1).max(500),
  mode: RefreshModeSchema.optional(),
  /** Object-level changes for datasets in `datasets` (others are ignored). */
  changes: z.array(ObjectChangeSchema).max(10_000).optional(),
});
export type RefreshRequest = z.infer<typeof RefreshRequestSchema>;
/** The named datasets the lake knows (the others are ignored); each will be reloaded. */
export const RefreshResultSchema = z.object({ accepted: z.array(z.string()) });

export const LakeErrorCodeSchema = z.enum([
  'sql_error',
  'timeout',
  'not_loaded',
  'bad_request',
  'unauthorized',
  'not_found',
  /** 413: the answer is larger than the lake's AGENTRY_LAKE_MAX_RESULT_BYTES (or the request's maxResultBytes). */
  'result_too_large',
  /** 504: a `waitFor` object was not applied within the wait (the message names it and why). */
  'not_applied',
  /** 429: the lake runs as many queries as it allows at once and its queue is full; retry after a moment. */
  'busy',
]);
export const LakeErrorBodySchema = z.object({
  error: z.object({ code: z.string(), message: z.string() }),
});
