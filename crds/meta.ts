import { z } from 'zod';

/** The API group and version every Agentry resource is served under. */
export const GROUP = 'agentry.dev';
export const VERSION = 'v1alpha1';
export const CATEGORY = 'agentry';

/** RFC 1123 label: what Kubernetes accepts as a namespace or a resource name of ours. */
export const dnsLabel = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a lowercase RFC 1123 label');

/**
 * RFC 1123 subdomain: the name Kubernetes accepts for an object such as a Task or AgentComputer.
 * Also a safe directory name: it starts and ends alphanumeric, so never `.`, `..` or a slash.
 */
export const objectName = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a lowercase RFC 1123 subdomain');

/** The label Agentry puts on every object it makes, with the value `agentry`. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
/** Selects the objects Agentry made (the label above): what its controllers' owned-object caches hold. */
export const MANAGED_BY_AGENTRY_SELECTOR = `${MANAGED_BY_LABEL}=agentry`;

/** On what the REST API makes (or claims) for a caller: the id of the API key that made it. */
export const OWNER_KEY_LABEL = 'agentry.dev/owner';

export const OwnerReferenceSchema = z.object({
  apiVersion: z.string(),
  kind: z.string(),
  name: z.string(),
  uid: z.string(),
  controller: z.boolean().optional(),
  blockOwnerDeletion: z.boolean().optional(),
});
export type OwnerReference = z.infer<typeof OwnerReferenceSchema>;

/** The part of Kubernetes' ObjectMeta that Agentry reads and writes; other fields are dropped on read. */
export const ObjectMetaSchema = z.object({
  name: z.string().min(1).max(253),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.number().int().optional(),
  creationTimestamp: z.string().optional(),
  deletionTimestamp: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  ownerReferences: z.array(OwnerReferenceSchema).optional(),
  finalizers: z.array(z.string()).optional(),
});
export type ObjectMeta = z.infer<typeof ObjectMetaSchema>;

/** metav1.Condition: observation with the generation it was made for. */
export const ConditionSchema = z.object({
  type: z
    .string()
    .min(1)
    .max(316)
    .describe('Type of the condition in CamelCase, e.g. Ready; unique within the list.'),
  status: z.enum(['True', 'False', 'Unknown']).describe('Status of the condition: True, False or Unknown.'),
  observedGeneration: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe(
      'The metadata.generation the condition was set for; older than the current generation, it may be stale.',
    ),
  lastTransitionTime: z
    .string()
    .describe('When the condition last changed status (RFC 3339, UTC, second precision).'),
  reason: z
    .string()
    .min(1)
    .max(1024)
    .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/)
    .describe('Why the condition has its status, as a CamelCase word a program can match on.'),
  message: z.string().max(32768).describe('Why the condition has its status, in words for people.'),
});
export type Condition = z.infer<typeof ConditionSchema>;

/** Operating intent of a workload: an enum, never a boolean or replica count (agent-sandbox). */
export const OperatingModeSchema = z.enum(['Running', 'Hibernated']);
export type OperatingMode = z.infer<typeof OperatingModeSchema>;

/** Where a workspace or lake runs (docs/architecture.md#runtimes). */
export const RuntimeSchema = z.enum(['kubevirt', 'pod', 'process']);
export type Runtime = z.infer<typeof RuntimeSchema>;

/** Kubernetes quantity, e.g. "2", "500m", "4Gi". */
export const QuantitySchema = z
  .string()
  .regex(
    /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/,
    'must be a Kubernetes quantity such as 2, 500m or 4Gi',
  );

/** Go duration as Kubernetes writes it, e.g. "15m", "1h30m", "0s" (0s disables the timer). */
export const DurationSchema = z
  .string()
  .regex(/^([0-9]+(ns|us|ms|s|m|h))+$/, 'must be a duration such as 15m or 1h');

export const WorkloadResourcesSchema = z
  .object({
    cpu: QuantitySchema.optional().describe(
      'CPU of the VM or pod as a Kubernetes quantity, e.g. 2 or 500m. Omitted: the installation default (chart value workloads.cpu, 2).',
    ),
    memory: QuantitySchema.optional().describe(
      'Memory of the VM or pod as a Kubernetes quantity, e.g. 4Gi. Omitted: the installation default (chart value workloads.memory, 4Gi).',
    ),
    disk: QuantitySchema.optional().describe(
      'Size of the persistent disk as a Kubernetes quantity, e.g. 20Gi; it survives hibernation. It can grow (if the storage class allows expansion) but never shrinks. Omitted: the installation default (chart value workloads.disk, 20Gi).',
    ),
    image: z
      .string()
      .min(1)
      .max(512)
      .optional()
      .describe(
        'Image the workload runs. pod runtime: a container image with agentry; kubevirt: a bootable disk image in containerDisk format, or pvc:<namespace>/<name> to clone a prepared PVC. Omitted: the installation default (chart values workloads.runnerImage, workloads.lakeImage).',
      ),
  })
  .describe(
    'CPU, memory, disk and image of the VM or pod; the process runtime ignores them. Each omitted value is the installation default.',
  );
export type WorkloadResources = z.infer<typeof WorkloadResourcesSchema>;

export const isoTimestamp = z.iso.datetime({ offset: true });

/** status.observedGeneration of every kind. */
export const ObservedGenerationSchema = z
  .number()
  .int()
  .describe('The metadata.generation the operator last acted on.');

/**
 * Conditions as a list-map keyed by type, so server-side apply merges them per type. Each kind
 * describes its own `status.conditions` (which types and reasons).
 */
export const ConditionsSchema = z
  .array(ConditionSchema)
  .max(16)
  .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] })
  .describe('Latest observations of the resource, one per type; types and reasons in docs/conditions.md.');
