import { z } from 'zod';
import {
  ConditionsSchema,
  DurationSchema,
  GROUP,
  ObservedGenerationSchema,
  RuntimeSchema,
  VERSION,
  WorkloadResourcesSchema,
} from '../meta.js';
import { conditionsDescription } from '../condition-catalog.js';
import { defineCustomResource } from '../resource.js';
import type { CustomResource, KubeObject } from '../resource.js';
import { WorkspacePoolConditionCatalog } from './conditions.js';

/**
 * Warm pools (docs/adr/0008-warm-pools.md). A WorkspacePool lives in an organization's namespace
 * and keeps AgentComputers ready there. A member is an ordinary AgentComputer with the labels
 * below; the API server claims one for a task or POST /agent-computers by one optimistic update
 * (resourceVersion), so two claims, from any number of API replicas, never get the same member.
 * A claimed member leaves the pool for good: it loses the pool's owner reference and its
 * `available` state, becomes the claimer's workspace, and the pool makes a new one.
 */

/** On every member: the name of the pool that made it (kept after a claim, for metrics and `kubectl get -l`). */
export const POOL_LABEL = 'agentry.dev/workspace-pool';
/** On every member: `available` until claimed, then `claimed`; the REST API never shows an available one. */
export const POOL_MEMBER_STATE_LABEL = 'agentry.dev/pool-member';
export const PoolMemberStates = {
  /** Made by the pool, not yet claimed: hidden from the REST API, never hibernated, not counted in limits. */
  Available: 'available',
  /** Claimed by a task or POST /agent-computers: an ordinary workspace of the organization from then on. */
  Claimed: 'claimed',
} as const;
export type PoolMemberState = (typeof PoolMemberStates)[keyof typeof PoolMemberStates];
/** Whether an AgentComputer is a pool member in `state` (the API hides available ones, the pool counts both). */
export const isPoolMemberIn = (object: Pick<KubeObject, 'metadata'>, state: PoolMemberState): boolean =>
  object.metadata.labels?.[POOL_MEMBER_STATE_LABEL] === state;
/** On a claimed member: when it was claimed (RFC 3339, milliseconds); the pool's demand window counts these. */
export const POOL_CLAIMED_AT_ANNOTATION = 'agentry.dev/claimed-at';
/**
 * On a member claimed for a task (POST /v1/tasks without workspaceId): the task's name, written by
 * the claim itself. The task was written at the same time with TASK_CLAIMED_WORKSPACE_ANNOTATION,
 * and runs only once the claim that names it is seen (claim-binding.ts).
 */
export const POOL_CLAIMED_FOR_TASK_ANNOTATION = 'agentry.dev/claimed-for-task';
/** On a task written together with its workspace's claim: the member's name (claim-binding.ts). */
export const TASK_CLAIMED_WORKSPACE_ANNOTATION = 'agentry.dev/claims-workspace';
/** On every member: the template's idleTimeout, which the claim writes into spec.idleTimeout (a member waits with 0s). */
export const POOL_IDLE_TIMEOUT_ANNOTATION = 'agentry.dev/pool-idle-timeout';
/** The pool an installation's default setting (or an Organization's spec.workspacePool) makes in each organization's namespace. */
export const DEFAULT_POOL_NAME = 'default';

export const WorkspacePoolTemplateSchema = z
  .object({
    runtime: RuntimeSchema.optional().describe(
      "Where members run: kubevirt, pod or process. Omitted: the operator's default runtime.",
    ),
    resources: WorkloadResourcesSchema.optional(),
    idleTimeout: DurationSchema.default('15m').describe(
      'The idleTimeout a member gets when it is claimed (members never hibernate while they wait in the pool). Default: 15m.',
    ),
  })
  .describe('What each member is: the AgentComputer spec fields it is made with.');
export type WorkspacePoolTemplate = z.infer<typeof WorkspacePoolTemplateSchema>;

export const WorkspacePoolSpecSchema = z
  .object({
    template: WorkspacePoolTemplateSchema.default({ idleTimeout: '15m' }),
    minReady: z
      .number()
      .int()
      .min(0)
      .max(1000)
      .default(2)
      .describe(
        'Members kept ready (or on their way) while nobody claims, 0-1000; 0 empties the pool. Default: 2.',
      ),
    maxReady: z
      .number()
      .int()
      .min(0)
      .max(1000)
      .optional()
      .describe(
        'Upper bound when claims come fast: the pool keeps minReady plus the members claimed in the last minute, at most maxReady, 0-1000, not below minReady. Omitted: minReady (no growth with demand).',
      ),
    refillPerMinute: z
      .number()
      .int()
      .min(1)
      .max(6000)
      .default(600)
      .describe(
        'At most this many members are made per minute, 1-6000, so a drained pool does not flood the cluster. Default: 600.',
      ),
  })
  .describe('Desired state of the pool: how many ready workspaces to keep and what they are.');
export type WorkspacePoolSpec = z.infer<typeof WorkspacePoolSpecSchema>;

const memberCount = (what: string) => z.number().int().min(0).optional().describe(what);

export const WorkspacePoolStatusSchema = z
  .object({
    observedGeneration: ObservedGenerationSchema.optional(),
    conditions: ConditionsSchema.optional().describe(conditionsDescription(WorkspacePoolConditionCatalog)),
    desired: memberCount(
      'Unclaimed members the pool aims for now: minReady plus recent claims, at most maxReady.',
    ),
    ready: memberCount('Unclaimed members whose runner answers: a claim gets one of these at once.'),
    provisioning: memberCount('Unclaimed members being made or starting.'),
    claimed: memberCount(
      'Members claimed from this pool that still exist (workspaces of the organization now).',
    ),
  })
  .describe('Observed state of the pool, written by the operator.');
export type WorkspacePoolStatus = z.infer<typeof WorkspacePoolStatusSchema>;

export const WorkspacePoolType = defineCustomResource({
  group: GROUP,
  version: VERSION,
  kind: 'WorkspacePool',
  plural: 'workspacepools',
  singular: 'workspacepool',
  namespaced: true,
  shortNames: ['wsp', 'pool'],
  description:
    "Keeps agent computers ready in an organization's namespace, so a task or a new workspace starts on one at once instead of waiting for a cold start.",
  spec: WorkspacePoolSpecSchema,
  status: WorkspacePoolStatusSchema,
  printerColumns: [
    { name: 'Min', type: 'integer', jsonPath: '.spec.minReady' },
    { name: 'Desired', type: 'integer', jsonPath: '.status.desired' },
    { name: 'Ready', type: 'integer', jsonPath: '.status.ready' },
    { name: 'Provisioning', type: 'integer', jsonPath: '.status.provisioning' },
    { name: 'Claimed', type: 'integer', jsonPath: '.status.claimed' },
    { name: 'Runtime', type: 'string', jsonPath: '.spec.template.runtime', priority: 1 },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});
export type WorkspacePool = CustomResource<WorkspacePoolSpec, WorkspacePoolStatus>;
