import { z } from 'zod';
import {
  ConditionsSchema,
  DurationSchema,
  GROUP,
  OperatingModeSchema,
  RuntimeSchema,
  VERSION,
  WorkloadResourcesSchema,
  isoTimestamp,
} from '../meta.js';
import { defineCustomResource } from '../resource.js';
import type { CustomResource } from '../resource.js';

/** An organization's one ContextLake, in its namespace, has this name. */
export const CONTEXT_LAKE_NAME = 'context-lake';
/** The Secret (same namespace, owned by the ContextLake) holding the values of its `${secrets:<key>}` references. */
export const CONTEXT_LAKE_SECRET_NAME = 'context-lake-credentials';

/** docs/api.md#context-lake: dataset and view names are SQL identifiers. */
export const lakeObjectName = z
  .string()
  .regex(
    /^[A-Za-z_][A-Za-z0-9_]{0,62}$/,
    'must start with a letter or _ and hold only letters, digits and _ (max 63)',
  );

/**
 * A dataset as stored. Param values are strings, as in the spicepod format; credential values
 * are never stored here, only `${secrets:<key>}` references to the lake's Secret.
 */
export const DatasetSchema = z.object({
  from: z.string().min(1).max(2048),
  name: lakeObjectName,
  params: z.record(z.string(), z.string().max(4096)).optional(),
  notifications: z.boolean().optional(),
});
export type Dataset = z.infer<typeof DatasetSchema>;

export const ViewSchema = z.object({
  name: lakeObjectName,
  sql: z.string().min(1).max(100_000),
});
export type View = z.infer<typeof ViewSchema>;

/** The spicepod: the lake's whole configuration (docs/api.md#context-lake). */
export const SpicepodSchema = z.object({
  version: z.literal('v1').default('v1'),
  kind: z.literal('Spicepod').default('Spicepod'),
  name: z.string().min(1).max(253),
  datasets: z.array(DatasetSchema).max(500).default([]),
  views: z.array(ViewSchema).max(500).default([]),
});
export type Spicepod = z.infer<typeof SpicepodSchema>;

export const ContextLakeSpecSchema = z.object({
  config: SpicepodSchema,
  operatingMode: OperatingModeSchema.default('Hibernated'),
  runtime: RuntimeSchema.optional(),
  resources: WorkloadResourcesSchema.optional(),
  /** Pause after this long without a query; 0s never (docs/api.md#context-lake: 15 minutes). */
  idleTimeout: DurationSchema.default('15m'),
  /** Changing it redeploys the lake server. */
  restartedAt: isoTimestamp.optional(),
});
export type ContextLakeSpec = z.infer<typeof ContextLakeSpecSchema>;

export const VmStatusSchema = z.enum(['running', 'paused', 'provisioning', 'error', 'not_provisioned']);
export type VmStatus = z.infer<typeof VmStatusSchema>;

export const DatasetStatusSchema = z.object({
  ok: z.boolean(),
  status: z.enum(['pending', 'loading', 'ready', 'refreshing', 'error', 'unknown']),
  connectorId: z.string().max(63),
  notifications: z.boolean(),
  error: z.string().max(4096).optional(),
  s3LastEventAt: isoTimestamp.optional(),
  s3LastRefreshAt: isoTimestamp.optional(),
  s3EventCount: z.number().int().min(0).optional(),
});
export type DatasetStatus = z.infer<typeof DatasetStatusSchema>;

/**
 * Condition types of a ContextLake.
 * - Provisioned: the lake server's VM, pod or process exists. Reasons: Provisioning, Provisioned, ProvisionFailed,
 *   IsolationUnavailable (process runtime: bubblewrap cannot run; the message says what to install).
 * - Ready: the lake server answers and has loaded its config. Reasons: Starting, Loaded, Paused, Failed.
 * - NotificationsReady: the organization's SQS queue exists. Reasons: QueueReady, QueueFailed.
 */
export const ContextLakeConditions = {
  Provisioned: 'Provisioned',
  Ready: 'Ready',
  NotificationsReady: 'NotificationsReady',
} as const;

export const ContextLakeStatusSchema = z.object({
  observedGeneration: z.number().int().optional(),
  vmStatus: VmStatusSchema.optional(),
  datasets: z.record(z.string(), DatasetStatusSchema).optional(),
  endpoint: z.string().max(2048).optional(),
  lastActivityAt: isoTimestamp.optional(),
  notifications: z
    .object({ queueUrl: z.string().max(2048), queueArn: z.string().max(2048), region: z.string().max(63) })
    .optional(),
  conditions: ConditionsSchema.optional(),
});
export type ContextLakeStatus = z.infer<typeof ContextLakeStatusSchema>;

export const ContextLakeType = defineCustomResource({
  group: GROUP,
  version: VERSION,
  kind: 'ContextLake',
  plural: 'contextlakes',
  singular: 'contextlake',
  namespaced: true,
  shortNames: ['lake', 'lakes'],
  description: "An organization's SQL server over S3 datasets and views (DuckDB), one per organization.",
  spec: ContextLakeSpecSchema,
  status: ContextLakeStatusSchema,
  printerColumns: [
    { name: 'Mode', type: 'string', jsonPath: '.spec.operatingMode' },
    { name: 'VM', type: 'string', jsonPath: '.status.vmStatus' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});
export type ContextLake = CustomResource<ContextLakeSpec, ContextLakeStatus>;
