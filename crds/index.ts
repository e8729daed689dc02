export * from './meta.js';
export * from './resource.js';
export * from './core.js';
export * from './organization.js';
export * from './agent-computer.js';
export * from './task.js';
export * from './webhook.js';
export * from './context-lake.js';

import { AgentComputerType } from './agent-computer.js';
import { ContextLakeType } from './context-lake.js';
import { OrganizationType } from './organization.js';
import { TaskType } from './task.js';
import { WebhookType } from './webhook.js';

/** Every Agentry custom resource kind, in the order the CRD files are written. */
export const AGENTRY_RESOURCE_TYPES = [
  OrganizationType,
  AgentComputerType,
  TaskType,
  ContextLakeType,
  WebhookType,
] as const;
export * from './task-status.js';
