import { expect } from '@jest/globals';
import { z } from 'zod';
import { isClaimable } from '../../api/workspace-pool/members.js';
import {
  AgentComputerType,
  POOL_CLAIMED_AT_ANNOTATION,
  POOL_CLAIMED_FOR_TASK_ANNOTATION,
  TaskType,
} from '../../crds/index.js';
import { call, eventually } from './api-server.js';
import type { TestApi } from './api-server.js';
import { addPoolMember, createPool } from './pool-members.js';

const CreatedTaskSchema = z.object({ id: z.string(), workspaceId: z.string() });

/**
 * Several API replicas over one store race for a few ready members: `tasks` POST /v1/tasks at once,
 * spread over `apps`, every app's cache first showing every member ready (so they all choose among
 * the same ones). Checks that no member became the workspace of two tasks (or was claimed twice)
 * and that the race claimed at least one; resolves the tasks' workspace ids. Keep `tasks` within
 * the organization's limits.agentComputers (10 on its default plan).
 */
export async function raceReplicasForMembers(
  apps: readonly TestApi[],
  options: { key: string; namespace: string; members: number; tasks: number },
): Promise<string[]> {
  const [first] = apps;
  if (first === undefined) throw new Error('no API replica');
  const pool = await createPool(first.store, options.namespace);
  const names = Array.from({ length: options.members }, (_, i) => `member-${i}`);
  for (const name of names) await addPoolMember(first.store, pool, name);
  await eventually(() =>
    apps.every((app) =>
      names.every((name) => {
        const cached = app.readModel.agentComputers.get(options.namespace, name);
        return cached !== undefined && isClaimable(cached, {});
      }),
    ),
  );
  const answers = await Promise.all(
    Array.from({ length: options.tasks }, async (_, i) => {
      const app = apps[i % apps.length] ?? first;
      const res = await call(app, '/v1/tasks', {
        key: options.key,
        method: 'POST',
        body: { prompt: `race ${i}`, executor: 'shell' },
      });
      if (res.status !== 201) throw new Error(`POST /v1/tasks answered ${res.status}: ${await res.text()}`);
      return CreatedTaskSchema.parse(await res.json());
    }),
  );
  const workspaces = answers.map((task) => task.workspaceId);
  expect(new Set(workspaces).size).toBe(options.tasks);
  const claimed = answers.filter((task) => names.includes(task.workspaceId));
  expect(claimed.length).toBeGreaterThan(0);
  for (const task of claimed) {
    const member = await first.store.get(AgentComputerType, options.namespace, task.workspaceId);
    expect(member?.metadata.annotations?.[POOL_CLAIMED_AT_ANNOTATION]).toBeDefined();
    // A claim written with its task names it; one that lost left no task behind (checked below).
    const forTask = member?.metadata.annotations?.[POOL_CLAIMED_FOR_TASK_ANNOTATION];
    if (forTask !== undefined) expect(forTask).toBe(task.id);
  }
  const stored = await first.store.list(TaskType, { namespace: options.namespace });
  expect(stored.items.map((task) => task.metadata.name).sort()).toEqual(
    answers.map((task) => task.id).sort(),
  );
  return workspaces;
}
