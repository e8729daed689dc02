import * as z from 'zod/mini';
import { request } from '../../http/client.js';

const LAKE = '/v1/context-lake';

/** One dataset's state in GET /status (docs/api.md#context-lake). */
const DatasetStatusSchema = z.object({
  ok: z.boolean(),
  status: z.string(),
  connectorId: z.string(),
  notifications: z.boolean(),
  error: z.optional(z.string()),
  s3EventCount: z.optional(z.number()),
  s3LastEventAt: z.optional(z.string()),
  s3LastRefreshAt: z.optional(z.string()),
  rowCount: z.optional(z.number()),
  /** Bytes of the source objects the lake holds for it. */
  bytes: z.optional(z.number()),
  /** When its data was last known current with its source. */
  dataAsOf: z.optional(z.string()),
});
export type DatasetStatus = z.infer<typeof DatasetStatusSchema>;

const LakeStatusSchema = z.object({
  vmStatus: z.string(),
  datasets: z.record(z.string(), DatasetStatusSchema),
});
export type LakeStatus = z.infer<typeof LakeStatusSchema>;

const DatasetListSchema = z.object({ datasets: z.array(z.object({ name: z.string(), from: z.string() })) });
export type Dataset = z.infer<typeof DatasetListSchema>['datasets'][number];

const ViewListSchema = z.object({ views: z.array(z.object({ name: z.string(), sql: z.string() })) });
export type View = z.infer<typeof ViewListSchema>['views'][number];

/** POST /sql's answer: rows keyed by column name, `truncated` when the lake's row limit cut it. */
const SqlResultSchema = z.object({
  rows: z.array(z.record(z.string(), z.unknown())),
  columns: z.array(z.object({ name: z.string(), type: z.string() })),
  rowCount: z.number(),
  truncated: z.boolean(),
  elapsedMs: z.number(),
  /** Per dataset the query read: when its data was current. */
  dataAsOf: z.optional(z.record(z.string(), z.string())),
});
export type SqlResult = z.infer<typeof SqlResultSchema>;

export interface LakeCatalog {
  status: LakeStatus;
  datasets: Dataset[];
  views: View[];
}

export async function loadLakeStatus(): Promise<LakeStatus> {
  return LakeStatusSchema.parse(await request('GET', `${LAKE}/status`));
}

/** The status, datasets and views at once (one context-lake:read each). */
export async function loadLakeCatalog(): Promise<LakeCatalog> {
  const [status, datasets, views] = await Promise.all([
    loadLakeStatus(),
    request('GET', `${LAKE}/datasets`),
    request('GET', `${LAKE}/views`),
  ]);
  return {
    status,
    datasets: DatasetListSchema.parse(datasets).datasets,
    views: ViewListSchema.parse(views).views,
  };
}

export async function runSql(query: string, signal?: AbortSignal): Promise<SqlResult> {
  return SqlResultSchema.parse(
    await request('POST', `${LAKE}/sql`, { body: { query }, ...(signal ? { signal } : {}) }),
  );
}
