import { randomUUID } from 'node:crypto';
import { issueApiKey } from '../../api/auth/api-keys.js';
import { ensureNamespace } from '../../cli/bootstrap.js';
import {
  AgentComputerType,
  OrganizationSpecSchema,
  OrganizationType,
  TaskType,
  apiVersionOf,
} from '../../crds/index.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { agentComputerObject, taskObject } from './workspace-objects.js';

/**
 * What an `agentry api` process started as a child reads: an organization (its namespace made as
 * the operator would), an API key of it, a workspace and a task on it, written straight to the
 * store. The API sees them through its watches once it starts.
 */
export async function seedOrganizationTask(
  store: ResourceStore,
  options: { controlNamespace: string; organization: string },
): Promise<{ key: string; taskId: string; namespace: string }> {
  const { controlNamespace, organization } = options;
  const namespace = `agentry-org-${organization}`;
  await ensureNamespace(store, controlNamespace);
  await ensureNamespace(store, namespace);
  await store.create(OrganizationType, {
    apiVersion: apiVersionOf(OrganizationType),
    kind: OrganizationType.kind,
    metadata: { name: organization },
    spec: OrganizationSpecSchema.parse({ displayName: organization, plan: 'pro' }),
  });
  const { key } = await issueApiKey(store, controlNamespace, {
    organization,
    user: 'alice',
    scopes: ['*'],
  });
  const workspace = randomUUID();
  await store.create(AgentComputerType, agentComputerObject(namespace, workspace));
  const task = await store.create(TaskType, taskObject(namespace, randomUUID(), workspace));
  return { key, taskId: task.metadata.name, namespace };
}
