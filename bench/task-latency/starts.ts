// Start latency: one `echo ready` task at a time, from its POST to its first events, on new
// workspaces (each deleted after) and on an existing one.
import { progress, summarize } from '../support/stats.js';
import type { Summary } from '../support/stats.js';
import { wallMs } from '../support/child.js';
import { within } from '../support/wait.js';
import { createTask, deleteWorkspace, readEvents } from './client.js';
import type { Client, Endpoint } from './client.js';
import { TASKS, TIMEOUT_MS, WARMUP, interruption } from './config.js';

export interface StartSample {
  /** POST sent → 201 received. */
  post: number;
  /** POST sent → `init` arrived. */
  init: number;
  /** POST sent → the runner's timestamp on `init` (ms resolution; the same clock on one machine). */
  initStamped: number;
  /** POST sent → the first `text` event ("ready") arrived: the comparable of the bash floor. */
  firstText: number;
  workspaceId: string;
}

/** One `echo ready` task, from its POST to `done`; the stream is opened as soon as the POST answers. */
export async function startOnce(client: Endpoint, workspaceId: string | undefined): Promise<StartSample> {
  return within('a task from POST to done', TIMEOUT_MS, interruption.signal, async (signal) => {
    const start = wallMs();
    const task = await createTask(client, {
      prompt: 'echo ready',
      ...(workspaceId === undefined ? {} : { workspaceId }),
    });
    const post = wallMs() - start;
    let init: number | undefined;
    let initStamped: number | undefined;
    let firstText: number | undefined;
    const done = await readEvents(client, task.id, signal, (event, arrival) => {
      if (event.eventType === 'init' && init === undefined) {
        init = arrival - start;
        initStamped = Date.parse(event.timestamp) - start;
      }
      if (event.eventType === 'text') firstText ??= arrival - start;
    });
    if (done.status !== 'completed') throw new Error(`task ${task.id} ended ${done.status}, not completed`);
    if (init === undefined || initStamped === undefined || firstText === undefined)
      throw new Error(`task ${task.id} completed without an init and a text event`);
    return { post, init, initStamped, firstText, workspaceId: task.workspaceId };
  });
}

export interface StartRun {
  post: Summary;
  init: Summary;
  firstText: Summary;
}

function summarizeStarts(samples: StartSample[]): StartRun {
  return {
    post: summarize(samples.map((s) => s.post)),
    init: summarize(samples.map((s) => s.init)),
    firstText: summarize(samples.map((s) => s.firstText)),
  };
}

export async function startOnNewWorkspaces(client: Client): Promise<StartRun & { deleted: Summary }> {
  const samples: StartSample[] = [];
  const deletions: number[] = [];
  for (let i = 0; i < WARMUP + TASKS; i++) {
    const sample = await startOnce(client, undefined);
    const start = performance.now();
    await deleteWorkspace(client, sample.workspaceId);
    if ((i + 1) % 10 === 0) progress(`  ${i + 1}/${WARMUP + TASKS}`);
    if (i < WARMUP) continue;
    samples.push(sample);
    deletions.push(performance.now() - start);
  }
  return { ...summarizeStarts(samples), deleted: summarize(deletions) };
}

export async function startOnExistingWorkspace(client: Client, workspaceId: string): Promise<StartRun> {
  const samples: StartSample[] = [];
  for (let i = 0; i < WARMUP + TASKS; i++) {
    const sample = await startOnce(client, workspaceId);
    if ((i + 1) % 10 === 0) progress(`  ${i + 1}/${WARMUP + TASKS}`);
    if (sample.workspaceId !== workspaceId)
      throw new Error(`a task given workspace ${workspaceId} ran on ${sample.workspaceId}`);
    if (i >= WARMUP) samples.push(sample);
  }
  return summarizeStarts(samples);
}
