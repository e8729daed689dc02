import { z } from 'zod';
import { ConditionsSchema, GROUP, ObservedGenerationSchema, VERSION, dnsLabel } from '../meta.js';
import { conditionsDescription } from '../condition-catalog.js';
import { defineCustomResource } from '../resource.js';
import type { CustomResource } from '../resource.js';
import { OrganizationConditionCatalog } from './conditions.js';
import { WorkspacePoolSpecSchema } from '../workspace-pool/types.js';
import { EgressPolicySchema } from '../egress.js';
import { ModelBudgetSchema, ModelUsageTotalsSchema, usagePeriodOf } from '../model-usage.js';

/** Executors every Agentry install knows; operators may configure more (docs/api.md#tasks). */
export const BUILTIN_EXECUTORS = ['claude', 'gemini', 'codex', 'opencode', 'shell'] as const;

export const executorName = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z][a-z0-9-]*$/, 'must be a lowercase executor name');

/** A count the organization may have at once: 0 up to `max`, `fallback` when omitted. */
const countLimit = (max: number, fallback: number) => z.number().int().min(0).max(max).default(fallback);

export const OrganizationLimitsSchema = z.object({
  webhooks: countLimit(1000, 3).describe('Webhooks the organization may register, 0-1000. Default: 3.'),
  concurrentTasks: countLimit(10000, 10).describe(
    'Tasks with a pending or running prompt at once, 0-10000; a task over it is refused. Default: 10.',
  ),
  agentComputers: countLimit(10000, 10).describe(
    'Agent computers that are not being deleted, 0-10000; a task-made (ephemeral) one counts while it runs, not while hibernated. Default: 10.',
  ),
});

export const OrganizationSpecSchema = z
  .object({
    displayName: z.string().min(1).max(200).describe('Name shown to people, 1-200 characters.'),
    plan: z
      .enum(['free', 'pro'])
      .default('free')
      .describe('free, or pro: pro also has the context lake (SQL over its datasets). Default: free.'),
    namespace: dnsLabel
      .optional()
      .describe(
        "Namespace holding the organization's resources (tasks, agent computers, webhooks, its lake, Secrets). Default: agentry-org-<name>.",
      ),
    limits: OrganizationLimitsSchema.default({
      webhooks: 3,
      concurrentTasks: 10,
      agentComputers: 10,
    }).describe('How much the organization may use at once; each omitted limit takes its default.'),
    executors: z
      .object({
        default: executorName
          .default('claude')
          .describe('Executor of a task that names none. Default: claude.'),
        disabled: z
          .array(executorName)
          .max(64)
          .default([])
          .describe('Executors the organization may not use; a task naming one is refused. Default: none.'),
      })
      .default({ default: 'claude', disabled: [] })
      .describe('Which agent CLIs (executors) tasks of the organization use.'),
    workspacePool: WorkspacePoolSpecSchema.optional().describe(
      "The organization's warm pool: the operator keeps a WorkspacePool named default in its namespace with this spec (minReady 0 turns the installation's default pool off for it). Omitted: the installation's default pool (chart value workspacePool.default), or none.",
    ),
    budget: ModelBudgetSchema.optional().describe(
      "The organization's model spending limit per calendar month (UTC): once status.usage reaches it, running prompts fail with reason budget_exceeded and new ones fail at once. Omitted: none.",
    ),
    egress: EgressPolicySchema.optional().describe(
      "Destinations the organization's workspaces may reach through the egress proxy, besides the installation's. Omitted: the installation's only.",
    ),
    allowPrivateWebhookTargets: z
      .boolean()
      .default(false)
      .describe(
        'Lets webhooks target loopback and private addresses (tests, the embedded default); otherwise only public addresses. Default: false.',
      ),
  })
  .describe('Desired state of the organization: its plan, limits, namespace and executor policy.');
export type OrganizationSpec = z.infer<typeof OrganizationSpecSchema>;

export const OrganizationStatusSchema = z
  .object({
    namespace: z
      .string()
      .optional()
      .describe("The namespace the operator made for the organization's resources."),
    observedGeneration: ObservedGenerationSchema.optional(),
    usage: ModelUsageTotalsSchema.extend({
      period: z
        .string()
        .regex(/^\d{4}-\d{2}$/)
        .describe('The calendar month (UTC) counted, YYYY-MM; a call in a new month starts from zero.'),
    })
      .optional()
      .describe(
        "What the model gateway counted for the organization's tasks this month (spec.budget applies to it).",
      ),
    conditions: ConditionsSchema.optional().describe(conditionsDescription(OrganizationConditionCatalog)),
  })
  .describe('Observed state of the organization, written by the operator.');
export type OrganizationStatus = z.infer<typeof OrganizationStatusSchema>;

export const OrganizationType = defineCustomResource({
  group: GROUP,
  version: VERSION,
  kind: 'Organization',
  plural: 'organizations',
  singular: 'organization',
  namespaced: false,
  shortNames: ['org', 'orgs'],
  description:
    'A tenant of Agentry: its plan, limits and executor policy. Its resources live in its namespace.',
  spec: OrganizationSpecSchema,
  status: OrganizationStatusSchema,
  printerColumns: [
    { name: 'Plan', type: 'string', jsonPath: '.spec.plan' },
    { name: 'Namespace', type: 'string', jsonPath: '.status.namespace' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});
export type Organization = CustomResource<OrganizationSpec, OrganizationStatus>;

/** The namespace an organization's resources live in. */
export const organizationNamespace = (org: Organization): string =>
  org.spec.namespace ?? org.status?.namespace ?? `agentry-org-${org.metadata.name}`;

/** The organization whose resources live in `namespace`, among `organizations`. */
export const organizationOfNamespace = (
  organizations: readonly Organization[],
  namespace: string,
): Organization | undefined => organizations.find((org) => organizationNamespace(org) === namespace);

/** The organization's usage of the month of `at` (a record of an earlier month counts nothing). */
export const usageThisMonth = (status: OrganizationStatus | undefined, at: Date) =>
  status?.usage?.period === usagePeriodOf(at) ? status.usage : undefined;
