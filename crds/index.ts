export * from './meta.js';
export * from './resource.js';
export * from './core.js';
export * from './organization/types.js';
export * from './agent-computer/types.js';
export * from './agent-computer/workload-digest.js';
export * from './agent-computer/readiness.js';
export * from './task/types.js';
export * from './webhook/types.js';
export * from './context-lake/types.js';
export * from './workspace-pool/types.js';
export * from './workspace-pool/claim-quiet.js';
export * from './workspace-pool/claim-binding.js';
export * from './workspace-pool/claimed-member.js';
export * from './workspace-pool/reservation.js';
export * from './model-usage.js';
export * from './egress.js';
export * from './organization/conditions.js';
export * from './agent-computer/conditions.js';
export * from './task/conditions.js';
export * from './context-lake/conditions.js';
export * from './workspace-pool/conditions.js';
export * from './event-catalog.js';
export * from './agent-computer/events.js';
export * from './task/events.js';
export * from './context-lake/events.js';
export * from './workspace-pool/events.js';

import { AgentComputerType } from './agent-computer/types.js';
import { ContextLakeType } from './context-lake/types.js';
import { OrganizationType } from './organization/types.js';
import { TaskType } from './task/types.js';
import { WebhookType } from './webhook/types.js';
import { WorkspacePoolType } from './workspace-pool/types.js';
import { AgentComputerConditionCatalog } from './agent-computer/conditions.js';
import { ContextLakeConditionCatalog } from './context-lake/conditions.js';
import { OrganizationConditionCatalog } from './organization/conditions.js';
import { TaskConditionCatalog } from './task/conditions.js';
import { WorkspacePoolConditionCatalog } from './workspace-pool/conditions.js';

/** Every Agentry custom resource kind, in the order the CRD files are written. */
export const AGENTRY_RESOURCE_TYPES = [
  OrganizationType,
  AgentComputerType,
  TaskType,
  ContextLakeType,
  WebhookType,
  WorkspacePoolType,
] as const;
export * from './task/status.js';

/** The conditions of every kind that has any (a Webhook has none), in the order docs/conditions.md lists them. */
export const AGENTRY_CONDITION_CATALOGS = [
  OrganizationConditionCatalog,
  AgentComputerConditionCatalog,
  TaskConditionCatalog,
  ContextLakeConditionCatalog,
  WorkspacePoolConditionCatalog,
] as const;

import type { EventCatalog } from './event-catalog.js';
import { AgentComputerEventCatalog } from './agent-computer/events.js';
import { ContextLakeEventCatalog } from './context-lake/events.js';
import { TaskEventCatalog } from './task/events.js';
import { WorkspacePoolEventCatalog } from './workspace-pool/events.js';

/** The Kubernetes Events of every kind the operator records any on, in the order docs/conditions.md lists them. */
export const AGENTRY_EVENT_CATALOGS = [
  AgentComputerEventCatalog,
  TaskEventCatalog,
  ContextLakeEventCatalog,
  WorkspacePoolEventCatalog,
] as const;

/** Every reason of an Event the operator records: the recorder accepts only these. */
export type EventReason = ReasonsOfCatalog<(typeof AGENTRY_EVENT_CATALOGS)[number]>;
type ReasonsOfCatalog<C> = C extends EventCatalog<infer D> ? keyof D & string : never;
