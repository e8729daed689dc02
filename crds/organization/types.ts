import { z } from 'zod';
import { ConditionsSchema, GROUP, VERSION, dnsLabel } from '../meta.js';
import { defineCustomResource } from '../resource.js';
import type { CustomResource } from '../resource.js';

/** Executors every Agentry install knows; operators may configure more (docs/api.md#tasks). */
export const BUILTIN_EXECUTORS = ['claude', 'gemini', 'codex', 'opencode', 'shell'] as const;

export const executorName = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z][a-z0-9-]*$/, 'must be a lowercase executor name');

export const OrganizationLimitsSchema = z.object({
  /** Registered outbound webhooks (docs/api.md#webhooks: default 3). */
  webhooks: z.number().int().min(0).max(1000).default(3),
  /** Tasks with a pending or running prompt at once. */
  concurrentTasks: z.number().int().min(0).max(10000).default(10),
  /**
   * Agent computers that are not being deleted; an ephemeral one (made for a task) counts while it
   * runs and not while it is hibernated (it hibernates when its task has no prompt to run).
   */
  agentComputers: z.number().int().min(0).max(10000).default(10),
});

export const OrganizationSpecSchema = z.object({
  displayName: z.string().min(1).max(200),
  plan: z.enum(['free', 'pro']).default('free'),
  /** Namespace holding the organization's resources; defaults to `agentry-org-<name>`. */
  namespace: dnsLabel.optional(),
  limits: OrganizationLimitsSchema.default({ webhooks: 3, concurrentTasks: 10, agentComputers: 10 }),
  executors: z
    .object({
      default: executorName.default('claude'),
      disabled: z.array(executorName).max(64).default([]),
    })
    .default({ default: 'claude', disabled: [] }),
  /** Lets webhooks target loopback and private addresses (tests, the embedded default). */
  allowPrivateWebhookTargets: z.boolean().default(false),
});
export type OrganizationSpec = z.infer<typeof OrganizationSpecSchema>;

/** Condition types of an Organization. */
export const OrganizationConditions = {
  /** True once the namespace and default policies exist. Reasons: NamespaceReady, NamespaceFailed. */
  Ready: 'Ready',
} as const;

export const OrganizationStatusSchema = z.object({
  namespace: z.string().optional(),
  observedGeneration: z.number().int().optional(),
  conditions: ConditionsSchema.optional(),
});
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
