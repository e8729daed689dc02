// What bench:api reads: one organization with a workspace and 20 tasks of two prompts each, written
// through the store (uids, resourceVersions) and seen by the API's read model through its watch.
import { randomUUID } from 'node:crypto';
import { AgentComputerType, TaskSpecSchema, TaskType, apiVersionOf } from '../../crds/index.js';
import type { Task } from '../../crds/index.js';
import { eventually } from '../../test/support/api-server.js';
import type { TestApi } from '../../test/support/api-server.js';
import { agentComputerObject } from '../../test/support/workspace-objects.js';

const ORG = 'bench';
const TASKS = 20;

const benchTask = (namespace: string, workspace: string, index: number): Task => {
  const submittedAt = new Date(Date.parse('2026-01-01T00:00:00Z') + index * 1000).toISOString();
  return {
    apiVersion: apiVersionOf(TaskType),
    kind: TaskType.kind,
    metadata: { name: randomUUID(), namespace },
    spec: TaskSpecSchema.parse({
      workspace,
      executor: 'shell',
      title: `task ${String(index)}`,
      owner: 'alice',
      prompts: [
        { id: randomUUID(), text: 'make the tests pass', submittedAt },
        { id: randomUUID(), text: 'and add a changelog entry', submittedAt },
      ],
    }),
  };
};

/** Seeds the organization; answers alice's key and the id of the newest task. */
export async function seedTasks(api: TestApi): Promise<{ key: string; taskId: string }> {
  const key = await api.key({ org: ORG, user: 'alice' });
  const namespace = `agentry-org-${ORG}`;
  const workspace = randomUUID();
  await api.store.create(AgentComputerType, agentComputerObject(namespace, workspace));
  let taskId = '';
  for (let i = 0; i < TASKS; i++) {
    const created = await api.store.create(TaskType, benchTask(namespace, workspace, i));
    taskId = created.metadata.name;
  }
  await eventually(
    () =>
      api.readModel.tasks.get(namespace, taskId) !== undefined &&
      api.readModel.agentComputers.get(namespace, workspace) !== undefined,
  );
  return { key, taskId };
}
