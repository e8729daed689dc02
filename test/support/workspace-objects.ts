import { randomUUID } from 'node:crypto';
import {
  AgentComputerSpecSchema,
  AgentComputerType,
  TaskSpecSchema,
  TaskType,
  apiVersionOf,
} from '../../crds/index.js';
import type { AgentComputer, Task } from '../../crds/index.js';

/** An AgentComputer as the API would create it, in the process runtime. */
export const agentComputerObject = (namespace: string, name: string, idleTimeout = '15m'): AgentComputer => ({
  apiVersion: apiVersionOf(AgentComputerType),
  kind: AgentComputerType.kind,
  metadata: { name, namespace },
  spec: AgentComputerSpecSchema.parse({ runtime: 'process', idleTimeout }),
});

/** A Task on `workspace` with one prompt waiting (a busy workspace until it is run). */
export const taskObject = (namespace: string, name: string, workspace: string): Task => ({
  apiVersion: apiVersionOf(TaskType),
  kind: TaskType.kind,
  metadata: { name, namespace },
  spec: TaskSpecSchema.parse({
    workspace,
    executor: 'shell',
    title: name,
    owner: 'u',
    prompts: [{ id: randomUUID(), text: 'x', submittedAt: new Date().toISOString() }],
  }),
});
