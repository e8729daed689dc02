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

/** Agent instructions are a document, not a prompt; the same bound as a prompt. */
export const MAX_AGENT_INSTRUCTIONS_LENGTH = 100_000;

/** The Secret (owned by the AgentComputer) holding the executor environment set by PATCH `env`. */
export const agentComputerEnvSecretName = (name: string): string => `agentcomputer-env-${name}`;

export const AgentComputerSpecSchema = z.object({
  displayName: z.string().min(1).max(200).default('Agent Computer'),
  icon: z.string().max(50).optional(),
  /** The user (API key owner) who made it. */
  owner: z.string().min(1).max(253).optional(),
  /** Omitted: the cluster default from the operator's configuration. */
  runtime: RuntimeSchema.optional(),
  operatingMode: OperatingModeSchema.default('Running'),
  resources: WorkloadResourcesSchema.optional(),
  /** Hibernate after this long without a prompt; 0s never. */
  idleTimeout: DurationSchema.default('15m'),
  /** Made for one task (POST /tasks without workspaceId); deleted with it. */
  ephemeral: z.boolean().default(false),
  /** Changing it redeploys the workload (like `kubectl rollout restart`). */
  restartedAt: isoTimestamp.optional(),
  /** Project instructions every executor reads (CLAUDE.md, AGENTS.md, GEMINI.md …), set by PATCH. */
  agentInstructions: z.string().max(MAX_AGENT_INSTRUCTIONS_LENGTH).optional(),
  /** Names of the executor environment held in the Secret `agentComputerEnvSecretName(name)`; never values. */
  envNames: z.array(z.string().min(1).max(128)).max(100).optional(),
});
export type AgentComputerSpec = z.infer<typeof AgentComputerSpecSchema>;

/**
 * Condition types of an AgentComputer, each stamped with observedGeneration.
 * - Provisioned: the VM, pod or process exists. Reasons: Provisioning, Provisioned, ProvisionFailed,
 *   IsolationUnavailable (process runtime: bubblewrap cannot run; the message says what to install),
 *   RuntimeNotEnabled (spec.runtime is not one this operator runs; the message says what to enable).
 * - Ready: the runner answers its health check. Reasons: Starting, RunnerReady, Hibernated, Failed.
 * - Hibernated: stopped on purpose, disk kept. Reasons: Running, IdleTimeout, Requested.
 */
export const AgentComputerConditions = {
  Provisioned: 'Provisioned',
  Ready: 'Ready',
  Hibernated: 'Hibernated',
} as const;

/** Condition reasons other components act on. */
export const AgentComputerReasons = {
  /**
   * Provisioned=False (and Ready=False): `spec.runtime` names a runtime this operator does not run
   * (AGENTRY_RUNTIMES); `provisionError` names it and what to enable, so the REST status is `error`
   * instead of `provisioning` for ever. Cleared once the spec names a runtime that runs.
   */
  RuntimeNotEnabled: 'RuntimeNotEnabled',
} as const;

export const AgentComputerStatusSchema = z.object({
  observedGeneration: z.number().int().optional(),
  conditions: ConditionsSchema.optional(),
  /** The VM, pod or process name once it exists. */
  sandboxId: z.string().max(253).optional(),
  /** Where the runner listens (cluster-internal URL); never shown to API clients. */
  endpoint: z.string().max(2048).optional(),
  lastActivityAt: isoTimestamp.optional(),
  /** Why provisioning failed, in words a user can act on. */
  provisionError: z.string().max(4096).optional(),
});
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

/** Set by the operator when it hibernated an idle agent computer itself; a user's start or stop clears it. */
export const HIBERNATED_BY_ANNOTATION = 'agentry.dev/hibernated-by';
