// The bench's WorkspacePool (crds/workspace-pool, docs/adr/0008-warm-pools.md), made with the store
// as a GitOps user would, and how a task's workspace came to be: claimed from it, or cold.
import {
  AgentComputerType,
  POOL_CLAIMED_FOR_TASK_ANNOTATION,
  POOL_LABEL,
  POOL_MEMBER_STATE_LABEL,
  PoolMemberStates,
  TaskType,
  WorkspacePoolSpecSchema,
  WorkspacePoolType,
  apiVersionOf,
  AgentComputerConditions,
} from '../../crds/index.js';
import type { AgentComputer } from '../../crds/index.js';
import { isTrue } from '../../crds/conditions.js';
import { isStoreError } from '../../platform/store/types.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { interruption } from '../task-latency/config.js';
import { progress } from '../support/stats.js';
import { until } from '../support/wait.js';
import { BENCH_POOL } from './config.js';
import type { Target } from './target.js';

/** Creates (or resizes) the bench's pool: `size` ready members, at most `size`. */
export async function ensurePool(target: Target, size: number): Promise<void> {
  const spec = WorkspacePoolSpecSchema.parse({
    minReady: size,
    maxReady: size,
    template: target.poolResources === undefined ? {} : { resources: target.poolResources },
  });
  const existing = await target.store.get(WorkspacePoolType, target.namespace, BENCH_POOL);
  if (existing === undefined) {
    await target.store.create(WorkspacePoolType, {
      apiVersion: apiVersionOf(WorkspacePoolType),
      kind: WorkspacePoolType.kind,
      metadata: { name: BENCH_POOL, namespace: target.namespace },
      spec,
    });
  } else {
    await target.store.replace(WorkspacePoolType, { ...existing, spec });
  }
}

/** The pool's unclaimed members whose runner answers, and those still on their way. */
export async function availableMembers(
  target: Target,
): Promise<{ ready: number; starting: number; members: AgentComputer[] }> {
  const { items } = await target.store.list(AgentComputerType, {
    namespace: target.namespace,
    labelSelector: `${POOL_LABEL}=${BENCH_POOL},${POOL_MEMBER_STATE_LABEL}=${PoolMemberStates.Available}`,
  });
  // A member handed out with its task (a claim reserved ahead) stays `available` for a second.
  const tasks = await target.store.list(TaskType, { namespace: target.namespace });
  const taskNames = new Set(tasks.items.map((task) => task.metadata.name));
  const live = items.filter(
    (ac) =>
      ac.metadata.deletionTimestamp === undefined &&
      !taskNames.has(ac.metadata.annotations?.[POOL_CLAIMED_FOR_TASK_ANNOTATION] ?? ''),
  );
  const ready = live.filter((ac) => isTrue(ac, AgentComputerConditions.Ready)).length;
  return { ready, starting: live.length - ready, members: items };
}

/** Waits until the pool has `size` ready members. */
export async function poolFilled(target: Target, size: number): Promise<void> {
  let last = { ready: 0, starting: 0 };
  await until(
    `pool ${BENCH_POOL} to have ${size} ready members`,
    target.sizes.settleMs,
    async () => {
      last = await availableMembers(target);
      return last.ready >= size ? true : undefined;
    },
    {
      signal: interruption.signal,
      pollMs: 50,
      state: () => `${last.ready} ready, ${last.starting} starting`,
    },
  );
}

/**
 * Waits until the pool has `size` ready members and nothing else of the organization is starting or
 * stopping (Target.busy), then `pauseMs` more: every timed task of the claim phase starts from this.
 */
export async function settled(target: Target, size: number): Promise<void> {
  let last = 'nothing read yet';
  await until(
    `pool ${BENCH_POOL} to be full and the node quiet`,
    target.sizes.settleMs,
    async () => {
      const members = await availableMembers(target);
      const busy = await target.busy?.();
      last = `${members.ready} ready, ${members.starting} starting${busy === undefined ? '' : `; ${busy}`}`;
      return members.ready >= size && members.starting === 0 && busy === undefined ? true : undefined;
    },
    { signal: interruption.signal, pollMs: 50, state: () => last },
  );
  await sleep(target.sizes.pauseMs, undefined, { signal: interruption.signal });
}

/**
 * How a task's workspace was made: claimed from the bench's pool (its label stays; a claim reserved
 * ahead is still `available` for a second), or cold (no pool label).
 */
export async function origin(target: Target, workspaceId: string): Promise<'claimed' | 'cold'> {
  const ac = await target.store.get(AgentComputerType, target.namespace, workspaceId);
  if (ac === undefined) throw new Error(`workspace ${workspaceId} is missing`);
  return ac.metadata.labels?.[POOL_LABEL] === BENCH_POOL ? 'claimed' : 'cold';
}

/** Deletes the pool and its unclaimed members (claimed ones are the organization's now), and waits until they are gone. */
export async function removePool(target: Target): Promise<void> {
  if (await ignoringNotFound(target.store.delete(WorkspacePoolType, target.namespace, BENCH_POOL)))
    progress('removed the pool; waiting for its unclaimed members to go');
  // Kubernetes collects them by owner reference; deleting them here does not wait for that.
  for (const ac of await availableMembers(target).then(({ members }) => members))
    await ignoringNotFound(target.store.delete(AgentComputerType, target.namespace, ac.metadata.name));
  await until(
    `pool ${BENCH_POOL}'s members to go`,
    target.sizes.settleMs,
    async () => ((await availableMembers(target)).members.length === 0 ? true : undefined),
    { signal: interruption.signal, pollMs: 100 },
  );
}

/** Whether `work` did it: false when what it deletes was already gone. */
async function ignoringNotFound(work: Promise<unknown>): Promise<boolean> {
  try {
    await work;
    return true;
  } catch (err) {
    if (!isStoreError(err, 'NotFound')) throw err;
    return false;
  }
}
