// The sequential phases: one `echo ready` task at a time, POST /v1/tasks → its `init` event, on a
// running workspace (the floor), a new one (cold), a hibernated one (wake) and one claimed from a
// ready pool. Each phase answers its samples; the untimed warm-up tasks come first.
import { startOnce } from '../task-latency/starts.js';
import type { StartSample } from '../task-latency/starts.js';
import { wallMs } from '../support/child.js';
import { progress } from '../support/stats.js';
import { ensurePool, origin, settled } from './pool.js';
import type { Target } from './target.js';
import { createWorkspace, deleteWorkspace, hibernate, waitForStatus } from './workspaces.js';

export interface PhaseSamples {
  /** POST sent → `init` arrived, ms. */
  init: number[];
  /** Tasks that were to claim a pool member but started cold (the pool phase only). */
  cold?: number;
  /** The last task's workload timeline (Target.timeline), where the runtime has one. */
  timeline?: string;
}

/** One task, and with `explain` the timeline of its workspace's start, taken right after `init`. */
async function startExplained(
  target: Target,
  workspaceId: string | undefined,
  explain: boolean,
): Promise<StartSample & { timeline?: string }> {
  const postedAt = wallMs();
  const sample = await startOnce(target.endpoint, workspaceId);
  if (!explain || target.timeline === undefined) return sample;
  // An aside: a timeline that cannot be read says so and the figures stand.
  const timeline = await target
    .timeline(sample.workspaceId, postedAt)
    .catch((err: unknown) => `no timeline: ${err instanceof Error ? err.message : String(err)}`);
  return { ...sample, timeline };
}

/** `warmup + n` rounds of `round`, keeping the timed ones. */
async function rounds(
  target: Target,
  what: string,
  round: (timed: boolean, last: boolean) => Promise<number>,
): Promise<number[]> {
  const { n, warmup } = target.sizes;
  const init: number[] = [];
  for (let i = 0; i < warmup + n; i++) {
    const ms = await round(i >= warmup, i === warmup + n - 1);
    if (i >= warmup) init.push(ms);
    if ((i + 1) % 5 === 0) progress(`  ${what} ${i + 1}/${warmup + n}`);
  }
  return init;
}

/** A task given the workspace's id while it runs: dispatch only. */
export async function existingPhase(target: Target, workspaceId: string): Promise<PhaseSamples> {
  const init = await rounds(target, 'existing', async () => {
    const sample = await startOnce(target.endpoint, workspaceId);
    if (sample.workspaceId !== workspaceId)
      throw new Error(`a task given ${workspaceId} ran on ${sample.workspaceId}`);
    return sample.init;
  });
  return { init };
}

/**
 * The first prompt of a workspace made ready beforehand (untimed), deleted after: a claim without
 * the claim. Beside the claim phase it says how much of a claim's time is the claim itself and how
 * much a runner's first prompt (and the churn of deleting and making workspaces between rounds).
 */
export async function firstPromptPhase(target: Target): Promise<PhaseSamples> {
  const init = await rounds(target, 'first prompt', async () => {
    const id = await createWorkspace(target.endpoint);
    await waitForStatus(target.endpoint, id, 'ready', target.sizes.settleMs);
    const sample = await startOnce(target.endpoint, id);
    await deleteWorkspace(target, id);
    return sample.init;
  });
  return { init };
}

/** A task without workspaceId and no pool: a new workspace each time, deleted after. */
export async function coldPhase(target: Target): Promise<PhaseSamples> {
  let timeline: string | undefined;
  const init = await rounds(target, 'cold', async (_timed, last) => {
    const sample = await startExplained(target, undefined, last);
    timeline = sample.timeline;
    await deleteWorkspace(target, sample.workspaceId);
    return sample.init;
  });
  return { init, ...(timeline === undefined ? {} : { timeline }) };
}

/** The workspace is stopped until hibernated (untimed), then a task given its id resumes it. */
export async function wakePhase(target: Target, workspaceId: string): Promise<PhaseSamples> {
  let timeline: string | undefined;
  const init = await rounds(target, 'wake', async (_timed, last) => {
    await hibernate(target.endpoint, workspaceId, target.sizes.settleMs);
    const sample = await startExplained(target, workspaceId, last);
    timeline = sample.timeline;
    return sample.init;
  });
  return { init, ...(timeline === undefined ? {} : { timeline }) };
}

/** Where a task's time went, split at the POST's answer and the runner's stamp on `init`. */
export interface StartSplit {
  /** POST sent → 201 received. */
  post: number[];
  /** POST sent → the runner's timestamp on `init`. */
  initStamped: number[];
}

export interface ClaimSamples extends PhaseSamples {
  /** The running workspace's tasks timed in the same rounds, under the same conditions as the claims. */
  paired: number[];
  split: { claim: StartSplit; paired: StartSplit };
}

const noSplit = (): StartSplit => ({ post: [], initStamped: [] });
const addSplit = (split: StartSplit, sample: StartSample): void => {
  split.post.push(sample.post);
  split.initStamped.push(sample.initStamped);
};

/**
 * A task without workspaceId while the pool is full, paired in each round with a task given the
 * running workspace `existingId`, in alternating order; the claimed workspace is deleted after.
 * Before each timed task the pool is full and the node settled (pool.ts settled(): no refill or
 * deletion running) and a pause has passed, so both tasks of a round start alike: the back-to-back
 * existing phase runs hot, one task every ~0.2 s, where a claim follows a ~10 s refill. Nothing waits
 * for the member's Ready to be observed for the claim's generation (the claim changes no workload
 * field: crds/agent-computer/readiness.ts), so that is not watched.
 */
export async function claimPhase(target: Target, existingId: string): Promise<ClaimSamples> {
  const size = target.sizes.claimPool;
  await ensurePool(target, size);
  let cold = 0;
  const paired: number[] = [];
  const split = { claim: noSplit(), paired: noSplit() };
  const claim = async (timed: boolean): Promise<number> => {
    await settled(target, size);
    const sample = await startOnce(target.endpoint, undefined);
    if (timed) addSplit(split.claim, sample);
    if (timed && (await origin(target, sample.workspaceId)) === 'cold') cold++;
    await deleteWorkspace(target, sample.workspaceId);
    return sample.init;
  };
  const existing = async (timed: boolean): Promise<void> => {
    await settled(target, size);
    const sample = await startOnce(target.endpoint, existingId);
    if (sample.workspaceId !== existingId)
      throw new Error(`a task given ${existingId} ran on ${sample.workspaceId}`);
    if (timed) {
      paired.push(sample.init);
      addSplit(split.paired, sample);
    }
  };
  let round = 0;
  const init = await rounds(target, 'claim', async (timed) => {
    const claimFirst = round++ % 2 === 1;
    if (!claimFirst) await existing(timed);
    const ms = await claim(timed);
    if (claimFirst) await existing(timed);
    return ms;
  });
  return { init, cold, paired, split };
}
