import { z } from 'zod';
import {
  ConditionsSchema,
  DurationSchema,
  GROUP,
  ObservedGenerationSchema,
  OperatingModeSchema,
  RuntimeSchema,
  VERSION,
  WorkloadResourcesSchema,
  isoTimestamp,
} from '../meta.js';
import { conditionsDescription } from '../condition-catalog.js';
import { defineCustomResource } from '../resource.js';
import type { CustomResource } from '../resource.js';
import { ContextLakeConditionCatalog } from './conditions.js';

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
  from: z
    .string()
    .min(1)
    .max(2048)
    .describe(
      'Where the data is: s3://<bucket>/<key or prefix/>, an https:// URL, or file://<path> below a file root the installation allows.',
    ),
  name: lakeObjectName.describe(
    'Table name in SQL: starts with a letter or _, then letters, digits and _, at most 63 characters.',
  ),
  params: z
    .record(z.string(), z.string().max(4096))
    .optional()
    .describe(
      'Connector settings as strings, e.g. file_format (parquet, csv, json), s3_region, s3_auth, s3_endpoint. Credentials appear only as ${secrets:<key>} references to the Secret context-lake-credentials, never as values.',
    ),
  notifications: z
    .boolean()
    .optional()
    .describe(
      "S3 datasets: refresh when the bucket reports a change (S3 event notifications through the organization's SQS queue). Default: false.",
    ),
});
export type Dataset = z.infer<typeof DatasetSchema>;

export const ViewSchema = z.object({
  name: lakeObjectName.describe(
    'View name in SQL: starts with a letter or _, then letters, digits and _, at most 63 characters.',
  ),
  sql: z
    .string()
    .min(1)
    .max(100_000)
    .describe('The SELECT statement that defines the view, over the datasets.'),
});
export type View = z.infer<typeof ViewSchema>;

/** The spicepod: the lake's whole configuration (docs/api.md#context-lake). */
export const SpicepodSchema = z.object({
  version: z.literal('v1').default('v1').describe('Version of the spicepod format; only v1. Default: v1.'),
  kind: z.literal('Spicepod').default('Spicepod').describe('Always Spicepod. Default: Spicepod.'),
  name: z
    .string()
    .min(1)
    .max(253)
    .describe('Name of the configuration; the REST API names it after the organization.'),
  datasets: z
    .array(DatasetSchema)
    .max(500)
    .default([])
    .describe('Data loaded into tables, each from one location; at most 500. Default: none.'),
  views: z
    .array(ViewSchema)
    .max(500)
    .default([])
    .describe('SQL views over the datasets; at most 500. Default: none.'),
});
export type Spicepod = z.infer<typeof SpicepodSchema>;

export const ContextLakeSpecSchema = z
  .object({
    config: SpicepodSchema.describe("The lake's configuration (a spicepod): its datasets and views."),
    operatingMode: OperatingModeSchema.default('Hibernated').describe(
      'Running, or Hibernated: the lake server is stopped (paused) with its disk kept. A query through the REST API starts it; it pauses again after idleTimeout. Default: Hibernated.',
    ),
    runtime: RuntimeSchema.optional().describe(
      "Where the lake server runs: kubevirt (a VM), pod or process (a local process, the embedded default only). Omitted: the operator's default (chart value runtime.default, AGENTRY_DEFAULT_RUNTIME).",
    ),
    resources: WorkloadResourcesSchema.optional(),
    idleTimeout: DurationSchema.default('15m').describe(
      'Pause after this long without a query, as a duration such as 15m or 1h30m; 0s never pauses. Default: 15m.',
    ),
    restartedAt: isoTimestamp
      .optional()
      .describe(
        'Changing it (to the current time, RFC 3339) redeploys the lake server, which loads its datasets again.',
      ),
  })
  .describe("Desired state of the organization's context lake: its configuration and when it runs.");
export type ContextLakeSpec = z.infer<typeof ContextLakeSpecSchema>;

export const VmStatusSchema = z.enum(['running', 'paused', 'provisioning', 'error', 'not_provisioned']);
export type VmStatus = z.infer<typeof VmStatusSchema>;

/** The source objects a dataset's table holds, summarized (the lake's LakeSourceVersions). */
export const DatasetSourcesSchema = z
  .object({
    objects: z.number().int().min(0).describe('Source objects the table holds.'),
    digest: z
      .string()
      .max(128)
      .describe('sha256 over the sorted key and ETag of each object: equal digests, equal data.'),
    newestModified: isoTimestamp.optional().describe('The newest LastModified among them.'),
  })
  .describe('The source versions loaded.');

/** What the lake last did to a dataset's table (the lake's LakeRefreshOutcome). */
export const DatasetRefreshSchema = z
  .object({
    kind: z
      .enum(['full', 'incremental', 'check'])
      .describe(
        'full: every object fetched again; incremental: only changed objects; check: sources compared, nothing changed.',
      ),
    trigger: z
      .enum(['load', 'request', 'event', 'interval', 'wake', 'schema'])
      .describe(
        'Why: load (first load or a changed definition), request (POST refresh), event (S3 notification), interval, wake, schema (a new object did not fit the table).',
      ),
    at: isoTimestamp.describe('When it ended.'),
    fetchedObjects: z.number().int().min(0).describe('Objects downloaded.'),
    fetchedBytes: z.number().int().min(0).describe('Bytes downloaded.'),
    removedObjects: z.number().int().min(0).describe('Objects whose rows were removed.'),
    ms: z.number().min(0).describe('How long it took, in milliseconds.'),
  })
  .describe('The last refresh of the dataset and what it cost.');

export const DatasetStatusSchema = z.object({
  ok: z.boolean().describe('Whether the dataset can be queried (ready or refreshing).'),
  status: z
    .enum(['pending', 'loading', 'ready', 'refreshing', 'error', 'unknown'])
    .describe(
      'State of the dataset: pending, loading (first load), ready, refreshing (old data still served), error, or unknown while the lake is not running.',
    ),
  connectorId: z.string().max(63).describe('Connector its from names: s3, https, file, or unknown.'),
  notifications: z.boolean().describe('Whether S3 event notifications refresh it (spec notifications).'),
  error: z.string().max(4096).optional().describe('Why loading the dataset failed (credentials redacted).'),
  s3LastEventAt: isoTimestamp
    .optional()
    .describe('Time of the latest S3 event notification received for it.'),
  s3LastRefreshAt: isoTimestamp
    .optional()
    .describe('When S3 event notifications last made a running lake refresh it.'),
  s3EventCount: z.number().int().min(0).optional().describe('S3 event notifications received for it so far.'),
  rowCount: z.number().int().min(0).optional().describe('Rows of its table.'),
  bytes: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Bytes of the source objects its table holds, as listed by the source.'),
  loadedAt: isoTimestamp
    .optional()
    .describe('When the data now served was loaded (first load or last refresh that changed it).'),
  dataAsOf: isoTimestamp
    .optional()
    .describe(
      'The data was current with its sources at this time (copied at most once a minute unless something else changed; every SQL answer carries the exact value).',
    ),
  sources: DatasetSourcesSchema.optional(),
  lastRefresh: DatasetRefreshSchema.optional(),
});
export type DatasetStatus = z.infer<typeof DatasetStatusSchema>;

/** What a dataset's table holds (docs/adr/0010-durable-incremental-lake.md), part of its status entry. */
export type DatasetFacts = Pick<
  DatasetStatus,
  'rowCount' | 'bytes' | 'loadedAt' | 'dataAsOf' | 'sources' | 'lastRefresh'
>;

/** The facts of a status entry, the rest left out (fields it lacks are undefined: JSON drops them). */
export function datasetFactsOf(entry: DatasetStatus | undefined): DatasetFacts {
  if (entry === undefined) return {};
  const { rowCount, bytes, loadedAt, dataAsOf, sources, lastRefresh } = entry;
  return { rowCount, bytes, loadedAt, dataAsOf, sources, lastRefresh };
}

export const ContextLakeStatusSchema = z
  .object({
    observedGeneration: ObservedGenerationSchema.optional(),
    vmStatus: VmStatusSchema.optional().describe(
      'State of the lake server: not_provisioned (never started), provisioning, running (it answers, even while loading), paused (hibernated) or error (cannot start without a change).',
    ),
    datasets: z
      .record(z.string(), DatasetStatusSchema)
      .optional()
      .describe('State of each dataset of spec.config, by dataset name.'),
    endpoint: z.string().max(2048).optional().describe('Cluster-internal URL where the lake server listens.'),
    lastActivityAt: isoTimestamp
      .optional()
      .describe('Time of the latest query, or of it last becoming ready; the idle timeout counts from it.'),
    notifications: z
      .object({
        queueUrl: z.string().max(2048).describe('URL of the SQS queue.'),
        queueArn: z
          .string()
          .max(2048)
          .describe("ARN of the SQS queue, to name in the bucket's event notification configuration."),
        region: z.string().max(63).describe('AWS region of the SQS queue.'),
      })
      .optional()
      .describe(
        "The organization's SQS queue that receives S3 event notifications, once a dataset asks for notifications.",
      ),
    conditions: ConditionsSchema.optional().describe(conditionsDescription(ContextLakeConditionCatalog)),
  })
  .describe('Observed state of the context lake, written by the operator.');
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
