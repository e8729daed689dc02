import { RefreshModeSchema, SqlRequestSchema, SqlResultSchema } from '../../platform/lake-protocol.js';
import { z } from 'zod';
import {
  DatasetSchema,
  DatasetStatusSchema,
  SpicepodSchema,
  ViewSchema,
  VmStatusSchema,
  lakeObjectName,
} from '../../crds/context-lake/types.js';

/**
 * Request and response bodies of the context-lake API (docs/api.md#context-lake). Requests are
 * strict (unknown fields are 400); what they accept is checked once here, then per connector.
 */

/**
 * Spicepod params are strings; YAML-minded clients send `hive_partitioning_enabled: true` or a
 * number, which mean the same, so scalars are accepted and stored as their text.
 */
const ParamValueSchema = z
  .union([z.string().max(4096), z.number(), z.boolean()])
  .transform((value) => String(value));

const ParamsSchema = z.record(z.string().min(1).max(128), ParamValueSchema);

/** A dataset in a request: literal credentials or `${secrets:<key>}` references. */
export const DatasetBodySchema = z.strictObject({
  from: z.string().min(1).max(2048),
  name: lakeObjectName,
  params: ParamsSchema.optional(),
  notifications: z.boolean().optional(),
});
export type DatasetBody = z.infer<typeof DatasetBodySchema>;

/** `updateDatasets[name]`: each field given replaces the dataset's field whole (params are not merged). */
export const DatasetUpdateSchema = z.strictObject({
  from: z.string().min(1).max(2048).optional(),
  name: lakeObjectName.optional(),
  params: ParamsSchema.optional(),
  notifications: z.boolean().optional(),
});
export type DatasetUpdate = z.infer<typeof DatasetUpdateSchema>;

export const ViewBodySchema = z.strictObject({
  name: lakeObjectName,
  sql: z.string().min(1).max(100_000),
});
export type ViewBody = z.infer<typeof ViewBodySchema>;

/** PATCH /config: applied in the order removes, adds, updates; all or nothing. */
export const PatchConfigBodySchema = z.strictObject({
  addDatasets: z.array(DatasetBodySchema).max(500).optional(),
  removeDatasets: z.array(z.string().max(253)).max(500).optional(),
  updateDatasets: z.record(z.string().max(253), DatasetUpdateSchema).optional(),
  addViews: z.array(ViewBodySchema).max(500).optional(),
  removeViews: z.array(z.string().max(253)).max(500).optional(),
});
export type PatchConfigBody = z.infer<typeof PatchConfigBodySchema>;

export const NameParamsSchema = z.object({
  name: z.string().max(253).describe("The dataset's or view's name"),
});

/** `{ query }`, optionally with objects the answer must include (`waitFor`, bounded by `waitTimeoutMs`). */
export const SqlBodySchema = SqlRequestSchema.pick({ query: true, waitFor: true, waitTimeoutMs: true });
export type SqlBody = z.infer<typeof SqlBodySchema>;

/** POST /datasets/:name/refresh: `auto` (default) fetches only what changed, `full` everything again. */
export const RefreshBodySchema = z.strictObject({
  mode: RefreshModeSchema.optional().describe(
    'auto (default): fetch only the objects whose ETag changed; full: fetch every object again and rebuild the table',
  ),
});
export const RefreshResponseSchema = z.object({
  ok: z.literal(true),
  /** The datasets the lake queued for refresh. */
  accepted: z.array(z.string()),
  mode: RefreshModeSchema,
});

/** docs/api.md#context-lake: what a save with `notifications: true` answers, for the bucket owner. */
export const NotificationSetupSchema = z.object({
  queueArn: z.string(),
  region: z.string(),
  instructions: z.array(z.string()),
});

export const ConfigResponseSchema = z.object({ yaml: z.string(), config: SpicepodSchema });
export const DatasetListSchema = z.object({ datasets: z.array(DatasetSchema) });
export const ViewListSchema = z.object({ views: z.array(ViewSchema) });
export const SavedDatasetSchema = z.object({
  ok: z.literal(true),
  dataset: DatasetSchema,
  notifications: NotificationSetupSchema.optional(),
});
export const SavedViewSchema = z.object({ ok: z.literal(true), view: ViewSchema });
export const OkSchema = z.object({ ok: z.literal(true) });
export const PatchedConfigSchema = z.object({
  ok: z.literal(true),
  config: SpicepodSchema,
  notifications: z.record(z.string(), NotificationSetupSchema),
});
export const LakeStatusResponseSchema = z.object({
  vmStatus: VmStatusSchema,
  datasets: z.record(z.string(), DatasetStatusSchema),
});
/** `vmStatus` is the machine now; `requestedMode` what was asked of it, which vmStatus follows. */
export const VmActionResponseSchema = z.object({
  ok: z.literal(true),
  vmStatus: VmStatusSchema,
  requestedMode: z.enum(['running', 'paused']),
});
/** The lake server's result, as the API answers it (elapsedMs measured by the API, the wait included). */
export const SqlResponseSchema = SqlResultSchema;
