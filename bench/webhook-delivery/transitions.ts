// Transitions, written as the Task reconciler writes them: the status and its outbox entries in one
// write at the version read, retried on Conflict.
import { TaskType, WebhookType } from '../../crds/index.js';
import type { OutboxEntry, Task, WebhookEventType } from '../../crds/index.js';
import { transitionEvents, outboxEntriesFor } from '../../operator/task/webhook-events.js';
import { isStoreError } from '../../platform/store/types.js';
import { pool } from '../support/pool.js';
import { sleepUntil } from '../support/wait.js';
import { NS, TASKS, TRANSITIONS, WEBHOOKS, WRITERS, interruption } from './config.js';
import { storeOf } from './environment.js';
import { PROMPT_2, newTask, nextStatus } from './sample-task.js';
/** What one transition left: its outbox entries and when its status write started. */
export interface Written {
  entries: OutboxEntry[];
  /** performance.now() right before the status write that succeeded. */
  at: number;
  /** How long that write took. */
  writeMs: number;
  conflicts: number;
}

async function readTask(name: string): Promise<Task> {
  const task = await storeOf().get(TaskType, NS, name);
  if (task === undefined) throw new Error(`task ${name} is gone`);
  return task;
}

/** The API's part of a follow-up prompt: the second prompt in the spec (at the version read). */
async function addFollowUp(name: string): Promise<void> {
  const store = storeOf();
  for (let attempt = 1; ; attempt++) {
    const task = await readTask(name);
    if (task.spec.prompts.some((prompt) => prompt.id === PROMPT_2)) return;
    const prompts = [
      ...task.spec.prompts,
      {
        id: PROMPT_2,
        text: 'Add a metric on the dead-letter queue depth',
        submittedAt: new Date().toISOString(),
      },
    ];
    try {
      await store.replace(TaskType, { ...task, spec: { ...task.spec, prompts } });
      return;
    } catch (err) {
      if (!isStoreError(err, 'Conflict') || attempt >= 100) throw err;
    }
  }
}

/** What comes before a step's status write: the Task itself, or a follow-up prompt in its spec. */
async function beforeTransition(name: string, step: number): Promise<void> {
  if (step === 0) await storeOf().create(TaskType, newTask(name));
  if (step === 3) await addFollowUp(name);
}

/** The outbox entries of `events`, as the Task reconciler makes them: for the webhooks listed now. */
async function owed(events: readonly WebhookEventType[], now: Date, what: string): Promise<OutboxEntry[]> {
  const webhooks = await storeOf().list(WebhookType, { namespace: NS });
  const entries = outboxEntriesFor(webhooks.items, events, now);
  if (entries.length !== WEBHOOKS)
    throw new Error(`${what} owes ${entries.length} deliveries, not ${WEBHOOKS}`);
  return entries;
}

/**
 * One transition of `name`: the status of `step`, with one outbox entry per webhook for its event,
 * in the same write at the version read; on Conflict (the delivery controller wrote the outbox
 * meanwhile) read and write again, with the same entries.
 */
export async function writeTransition(name: string, step: number): Promise<Written> {
  const store = storeOf();
  await beforeTransition(name, step);
  let entries: OutboxEntry[] | undefined;
  for (let conflicts = 0; ; conflicts++) {
    const task = await readTask(name);
    const now = new Date();
    const status = nextStatus(step, task, now);
    const events = transitionEvents(task, status.prompts ?? [], status.status ?? 'running');
    if (events.length !== 1)
      throw new Error(`step ${step} of ${name} makes events [${events.join(', ')}], not one`);
    entries ??= await owed(events, now, `step ${step} of ${name}`);
    const outbox = [...(task.status?.outbox ?? []), ...entries];
    const at = performance.now();
    try {
      await store.replaceStatus(
        TaskType,
        { ...task, status: { ...status, outbox } },
        { resourceVersion: task.metadata.resourceVersion },
      );
      return { entries, at, writeMs: performance.now() - at, conflicts };
    } catch (err) {
      if (!isStoreError(err, 'Conflict') || conflicts >= 100) throw err;
    }
  }
}

export interface Transition {
  task: string;
  step: number;
  /** Offset from the phase's start at which it is released (paced), or 0. */
  releaseMs: number;
}

/** Round-robin over the tasks: every task's step n before any task's step n + 1. */
export function schedule(prefix: string, perSecond: number): Transition[] {
  return Array.from({ length: TRANSITIONS }, (_, k) => ({
    task: `${prefix}-${String(k % TASKS).padStart(4, '0')}`,
    step: Math.floor(k / TASKS),
    releaseMs: perSecond > 0 ? (k / perSecond) * 1000 : 0,
  }));
}

export interface WriteRun {
  written: Written[];
  start: number;
  end: number;
}

/** Writes the transitions with WRITERS writers; a task's steps stay in order. */
export async function writeTransitions(transitions: readonly Transition[]): Promise<WriteRun> {
  const previous = new Map<string, Promise<unknown>>();
  const written: Written[] = [];
  const start = performance.now();
  await pool(
    transitions,
    WRITERS,
    async ({ task, step, releaseMs }) => {
      await sleepUntil(start + releaseMs, interruption.signal);
      const before = previous.get(task);
      const mine = (async () => {
        await before;
        written.push(await writeTransition(task, step));
      })();
      previous.set(task, mine);
      await mine;
    },
    interruption.signal,
  );
  return { written, start, end: performance.now() };
}
