// The measured phases: transitions written while the controller runs (paced or not), and the backlog
// (all written first, then a controller started).
import { setTimeout as sleep } from 'node:timers/promises';
import { TaskType } from '../../crds/index.js';
import { ms, perSecond as rate } from '../support/format.js';
import { summarize } from '../support/stats.js';
import { until } from '../support/wait.js';
import { DELIVERIES, NS, STEPS_PER_TASK, TIMEOUT_MS, TRANSITIONS, interruption } from './config.js';
import { EMPTY_METRICS, readMetrics, reportController, reportStoreWrites } from './controller-metrics.js';
import { checkLine, deliveryRun, overOneSecond, perTenth, reportDelivery } from './deliveries.js';
import type { DeliveryRun } from './deliveries.js';
import { arrivedCount, env, received, resetRecorders, startDelivery, storeOf } from './environment.js';
import type { Captured } from './receivers.js';
import { schedule, writeTransitions } from './transitions.js';
import type { WriteRun } from './transitions.js';

async function pendingOutbox(prefix: string): Promise<{ tasks: number; entries: number }> {
  const { items } = await storeOf().list(TaskType, { namespace: NS });
  const mine = items.filter((task) => task.metadata.name.startsWith(`${prefix}-`));
  const pending = mine.filter((task) => (task.status?.outbox ?? []).length > 0);
  return {
    tasks: pending.length,
    entries: pending.reduce((sum, task) => sum + (task.status?.outbox?.length ?? 0), 0),
  };
}

/** Waits for every delivery to arrive and every outbox of the phase to drain. */
async function awaitDrained(prefix: string, expected: number, start: number): Promise<number> {
  const remaining = (): number => Math.max(1000, TIMEOUT_MS - (performance.now() - start));
  const options = { signal: interruption.signal, pollMs: 5 };
  await until(
    'every delivery to arrive',
    remaining(),
    () => Promise.resolve(arrivedCount() >= expected ? true : undefined),
    {
      ...options,
      state: () => `${arrivedCount()}/${expected} webhook-ids arrived`,
    },
  );
  let pending = { tasks: 0, entries: 0 };
  await until(
    'every outbox to drain',
    remaining(),
    async () => {
      pending = await pendingOutbox(prefix);
      return pending.entries === 0 ? true : undefined;
    },
    { ...options, state: () => `${pending.entries} entries left in ${pending.tasks} tasks` },
  );
  return performance.now();
}

export interface Phase {
  run: DeliveryRun;
  writes: WriteRun;
  requests: Map<string, Captured>;
}

/** Transitions written while the controller runs (paced at `perSecond`, or as fast as they go). */
export async function livePhase(label: string, prefix: string, perSecond: number): Promise<Phase> {
  resetRecorders();
  env.counting?.reset();
  const before = await readMetrics();
  const writes = await writeTransitions(schedule(prefix, perSecond));
  const sent = new Map<string, { webhook: string; at: number }>();
  for (const w of writes.written) for (const e of w.entries) sent.set(e.id, { webhook: e.webhook, at: w.at });
  if (sent.size !== DELIVERIES) throw new Error(`${sent.size} outbox entries written, not ${DELIVERIES}`);
  const drained = await awaitDrained(prefix, DELIVERIES, writes.start);
  // Anything late (a duplicate) gets a moment to show.
  await sleep(200);
  const recorder = received();
  const first = Math.min(...writes.written.map((w) => w.at));
  const run = deliveryRun(label, sent, recorder, first);
  reportDelivery(run);
  const writeMs = summarize(writes.written.map((w) => w.writeMs));
  const conflicts = writes.written.reduce((sum, w) => sum + w.conflicts, 0);
  console.log(
    `  transitions written: ${writes.written.length} in ${ms(writes.end - writes.start)} ` +
      `(${rate(writes.written.length, writes.end - writes.start)}), status write p50 ${ms(writeMs.p50)}, ` +
      `p99 ${ms(writeMs.p99)}, ${conflicts} conflicts with the controller's writes`,
  );
  const lastArrival = Math.max(...run.timed.map((t) => t.arrived));
  console.log(
    `  last outbox drained ${ms(drained - lastArrival)} after the last arrival (polled every 5 ms); ` +
      `${overOneSecond(run)} deliveries took ≥ 1 s`,
  );
  console.log(`  latency by tenth of the transitions (p50/max ms): ${perTenth(run)}`);
  reportController(before, await readMetrics());
  reportStoreWrites(DELIVERIES);
  return { run, writes, requests: recorder.requests };
}

/** The backlog: every transition written with no controller running, then one started. */
export async function backlogPhase(prefix: string): Promise<DeliveryRun> {
  resetRecorders();
  env.counting?.reset();
  const writes = await writeTransitions(schedule(prefix, 0));
  const expected = new Map<string, { webhook: string; at: number }>();
  const start = performance.now();
  for (const w of writes.written)
    for (const e of w.entries) expected.set(e.id, { webhook: e.webhook, at: start });
  await startDelivery();
  const started = performance.now() - start;
  await awaitDrained(prefix, DELIVERIES, start);
  await sleep(200);
  const run = deliveryRun('backlog', expected, received(), start);
  console.log(
    `backlog: ${TRANSITIONS} transitions (${STEPS_PER_TASK} entries per webhook in each task's outbox) written ` +
      `with no controller, then one started (caches synced in ${ms(started)}): ` +
      `${rate(run.timed.length, run.spanMs)} (${run.timed.length} in ${ms(run.spanMs)}), last arrival ` +
      `${ms(run.latency.max)} after the start`,
  );
  console.log(`  ${checkLine(run.check, run.withoutId)}`);
  const seconds = run.timed.map((t) => Math.floor((t.arrived - start) / 1000));
  const perSecond = new Array<number>(Math.max(0, ...seconds) + 1).fill(0);
  for (const second of seconds) perSecond[second] = (perSecond[second] ?? 0) + 1;
  console.log(`  arrivals per second since the start: ${perSecond.join(' ')}`);
  reportController(EMPTY_METRICS, await readMetrics());
  reportStoreWrites(DELIVERIES);
  return run;
}
