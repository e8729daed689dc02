import { z } from 'zod';
import { EgressPolicySchema } from '../egress.js';
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
import { AgentComputerConditionCatalog } from './conditions.js';

/** Agent instructions are a document, not a prompt; the same bound as a prompt. */
export const MAX_AGENT_INSTRUCTIONS_LENGTH = 100_000;

/** The Secret (owned by the AgentComputer) holding the executor environment set by PATCH `env`. */
export const agentComputerEnvSecretName = (name: string): string => `agentcomputer-env-${name}`;

/** At most this many live previews per workspace (docs/api.md#previews). */
export const MAX_PREVIEWS = 20;

/** A preview id: 16 lowercase base32 characters (80 random bits), the start of its URL token. */
export const PreviewIdSchema = z.string().regex(/^[a-z2-7]{16}$/);

/** One preview URL of the workspace (POST /v1/agent-computers/:id/previews); removing it revokes it. */
export const WorkspacePreviewSchema = z
  .object({
    id: PreviewIdSchema.describe(
      'The preview id: 16 lowercase base32 characters, the start of its URL token.',
    ),
    port: z
      .number()
      .int()
      .min(1)
      .max(65535)
      .describe('The TCP port in the workspace the preview URL reaches.'),
    createdAt: isoTimestamp.describe('When it was made (RFC 3339).'),
    expiresAt: isoTimestamp.describe(
      'When the URL stops working (RFC 3339); the API prunes expired entries.',
    ),
    createdBy: z.string().min(1).max(253).describe('The user (API key owner) who made it.'),
  })
  .describe('A signed preview URL to one port of the workspace.');
export type WorkspacePreview = z.infer<typeof WorkspacePreviewSchema>;

export const AgentComputerSpecSchema = z
  .object({
    displayName: z
      .string()
      .min(1)
      .max(200)
      .default('Agent Computer')
      .describe("Name shown to people (the REST API's `name`), 1-200 characters. Default: Agent Computer."),
    icon: z
      .string()
      .max(50)
      .optional()
      .describe('Icon shown beside the name (an emoji or icon name), at most 50 characters.'),
    owner: z
      .string()
      .min(1)
      .max(253)
      .optional()
      .describe('The user (API key owner) who made it; set by the REST API.'),
    runtime: RuntimeSchema.optional().describe(
      "Where it runs: kubevirt (a VM), pod or process (a local process, the embedded default only). Omitted: the operator's default (chart value runtime.default, AGENTRY_DEFAULT_RUNTIME). A runtime the operator does not run sets Provisioned=False with reason RuntimeNotEnabled.",
    ),
    operatingMode: OperatingModeSchema.default('Running').describe(
      'Running, or Hibernated: stopped with its disk kept (CPU and memory released). The operator sets Hibernated after idleTimeout and Running when a task needs it. Default: Running.',
    ),
    resources: WorkloadResourcesSchema.optional(),
    idleTimeout: DurationSchema.default('15m').describe(
      'Hibernate after this long without a prompt (since it last became ready or a prompt last ran), as a duration such as 15m or 1h30m; 0s never hibernates. Default: 15m.',
    ),
    ephemeral: z
      .boolean()
      .default(false)
      .describe(
        'Made for one task (a task created without a workspace): hibernated when the task has nothing to run, deleted when the task is purged. Default: false.',
      ),
    restartedAt: isoTimestamp
      .optional()
      .describe(
        'Changing it (to the current time, RFC 3339) redeploys the workload on the same disk, like kubectl rollout restart.',
      ),
    agentInstructions: z
      .string()
      .max(MAX_AGENT_INSTRUCTIONS_LENGTH)
      .optional()
      .describe(
        'Project instructions every executor reads (written into CLAUDE.md, AGENTS.md or GEMINI.md before each prompt), at most 100,000 characters.',
      ),
    envNames: z
      .array(z.string().min(1).max(128))
      .max(100)
      .optional()
      .describe(
        'Names of the executor environment variables; their values live only in the Secret agentcomputer-env-<name> (owned by this resource), never here. At most 100.',
      ),
    previews: z
      .array(WorkspacePreviewSchema)
      .max(MAX_PREVIEWS)
      .optional()
      .describe(
        'Preview URLs to ports of the workspace, served by the API server; written by the REST API (removing an entry revokes its URL at once). At most 20.',
      ),
    egress: EgressPolicySchema.optional().describe(
      "Destinations this workspace may reach through the egress proxy, besides the installation's and its organization's.",
    ),
  })
  .describe('Desired state of the agent computer: what to run, where, and when to hibernate.');
export type AgentComputerSpec = z.infer<typeof AgentComputerSpecSchema>;

export const AgentComputerStatusSchema = z
  .object({
    observedGeneration: ObservedGenerationSchema.optional(),
    observedWorkload: z
      .string()
      .max(64)
      .optional()
      .describe(
        'Digest of the spec fields the workload is made from, as of observedGeneration: a later generation with the same digest (only its name, owner, idle timeout or other non-workload fields changed) is as ready as the conditions say.',
      ),
    conditions: ConditionsSchema.optional().describe(conditionsDescription(AgentComputerConditionCatalog)),
    sandboxId: z
      .string()
      .max(253)
      .optional()
      .describe('Name of the VM, pod or process running it, once it exists.'),
    // Never shown to API clients: it is an address inside the cluster.
    endpoint: z
      .string()
      .max(2048)
      .optional()
      .describe('Cluster-internal URL where the runner inside it listens.'),
    // Never shown to API clients either.
    address: z
      .string()
      .max(64)
      .optional()
      .describe(
        "The pod's cluster-internal IP when the endpoint is its Service: where preview URLs reach ports other than the runner's.",
      ),
    lastActivityAt: isoTimestamp
      .optional()
      .describe(
        'When it last became ready (first start or resume); the idle timeout counts from it or the latest prompt.',
      ),
    provisionError: z
      .string()
      .max(4096)
      .optional()
      .describe('Why provisioning failed, in words a user can act on; cleared once it provisions.'),
  })
  .describe('Observed state of the agent computer, written by the operator.');
export type AgentComputerStatus = z.infer<typeof AgentComputerStatusSchema>;

export const AgentComputerType = defineCustomResource({
  group: GROUP,
  version: VERSION,
  kind: 'AgentComputer',
  plural: 'agentcomputers',
  singular: 'agentcomputer',
  namespaced: true,
  shortNames: ['ac', 'acs', 'workspace'],
  description:
    'A workspace where coding agents run: a KubeVirt VM, a pod or a local process with a persistent disk.',
  spec: AgentComputerSpecSchema,
  status: AgentComputerStatusSchema,
  printerColumns: [
    { name: 'Display Name', type: 'string', jsonPath: '.spec.displayName' },
    { name: 'Runtime', type: 'string', jsonPath: '.spec.runtime' },
    { name: 'Mode', type: 'string', jsonPath: '.spec.operatingMode' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Sandbox', type: 'string', jsonPath: '.status.sandboxId', priority: 1 },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});
export type AgentComputer = CustomResource<AgentComputerSpec, AgentComputerStatus>;

/**
 * Stamped by the API server (at most once a minute) while preview URLs of the workspace carry
 * traffic: the idle timeout counts from it too, so a dev server in use keeps its workspace awake.
 */
export const LAST_PREVIEW_AT_ANNOTATION = 'agentry.dev/last-preview-at';

/** Set by the operator when it hibernated an idle agent computer itself; a user's start or stop clears it. */
export const HIBERNATED_BY_ANNOTATION = 'agentry.dev/hibernated-by';

/**
 * A new value each time the API server changed the workspace's artifacts in object storage (an
 * upload, a deletion): before a prompt, the operator pushes the store's side into the workspace only
 * when this differs from the value it read before its last sync (docs/architecture.md, "Dispatch").
 */
export const ARTIFACTS_CHANGED_ANNOTATION = 'agentry.dev/artifacts-changed';

/**
 * ARTIFACTS_CHANGED_ANNOTATION of a workspace made by Agentry (the API server, a warm pool): nothing
 * changed yet, so its first prompt needs no sync. Without the annotation (a workspace from YAML, or
 * from before the annotation existed) the first prompt syncs.
 */
export const ARTIFACTS_UNCHANGED = 'none';

/** The annotations of a workspace made by Agentry: its artifacts in object storage start unchanged. */
export const newWorkspaceAnnotations = (): Record<string, string> => ({
  [ARTIFACTS_CHANGED_ANNOTATION]: ARTIFACTS_UNCHANGED,
});

/**
 * Until when signed upload URLs issued for the workspace's artifacts are valid (RFC 3339): their
 * bytes reach object storage without the API server, so every prompt dispatched before then gets
 * the store's side pushed first.
 */
export const ARTIFACT_UPLOADS_OPEN_UNTIL_ANNOTATION = 'agentry.dev/artifact-uploads-open-until';
