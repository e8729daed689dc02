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

export const LakeDatasetStateSchema = z.object({
  status: z.enum(['pending', 'loading', 'ready', 'refreshing', 'error']),
  error: z.string().optional(),
  rowCount: z.number().int().min(0).optional(),
  /** When the data now served was loaded (first load or last successful refresh). */
  loadedAt: z.string().optional(),
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
});
export type LakeStatus = z.infer<typeof LakeStatusSchema>;

export const SqlRequestSchema = z.strictObject({
  query: z.string().min(1).max(1_000_000),
  /** Default: the server's AGENTRY_LAKE_ROW_LIMIT (10,000). */
  rowLimit: z.number().int().min(1).max(1_000_000).optional(),
  /** Default: the server's AGENTRY_LAKE_QUERY_TIMEOUT. */
  timeoutMs: z.number().int().min(1).max(3_600_000).optional(),
  /** Bytes of the rows' JSON; the smaller of this and the server's AGENTRY_LAKE_MAX_RESULT_BYTES applies. */
  maxResultBytes: z.number().int().min(1).optional(),
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
});
export type SqlResult = z.infer<typeof SqlResultSchema>;

export const RefreshRequestSchema = z.strictObject({
  datasets: z.array(z.string()).min(1).max(500),
});
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
]);
export const LakeErrorBodySchema = z.object({
  error: z.object({ code: z.string(), message: z.string() }),
});
