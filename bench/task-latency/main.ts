// Task start latency and live event latency on the embedded default (API server, operator and real
// runner processes in this process and its children, nothing faked), each against a floor measured
// in the same run:
// - start latency, POST /v1/tasks → the task's first `init` event on GET /v1/tasks/:id/events (the
//   stream opened right after the POST), on a new workspace (a new runner process) and on an existing
//   one, sequentially; floor: a bare `bash -c 'echo ready'` spawn until its first stdout line;
// - live event latency at ~1,000 events/s under CPU load (a busy-looping process per core beside it,
//   started and stopped by the bench): a `shell` task runs a Python script printing its wall clock
//   (time.time_ns) once per millisecond, and the client compares each `text` event's content with its
//   own wall clock on arrival; floor: the same script spawned here, its stdout read the same way.
//   With AGENTRY_EVENT_TRACE=1 (set by the bench) the runner and the API mark each event's hops, and
//   the phase prints p50/p99 per hop (bench/task-latency/hops.ts).
// The `shell` executor's `init` is the runner's own, sent before bash starts, so the first `text`
// event ("ready") is printed too: that one includes the spawn the bash floor measures.
// Asides, to explain the figures: a bare `agentry runner` start, a workspace deletion, and one
// append + fdatasync (the runner makes events durable before serving them, one fdatasync per batch).
// Progress goes to stderr, figures to stdout. Other load on the machine shows in both the floors and
// the figures; the load average is printed at the start and the end.
//
// Run: npm run bench:tasks
// Env: BENCH_TASKS            tasks per start-latency phase (default 50)
//      BENCH_WARMUP           tasks per start-latency phase run first and not counted (default 1)
//      BENCH_EVENT_RATE       events per second of the live-event phase (default 1000)
//      BENCH_EVENT_SECONDS    how long the live-event phase prints (default 5)
//      BENCH_EVENT_ROUNDS     live-event rounds, one after another (default 1; the summary takes
//                             the round with the median p99)
//      BENCH_BUSY_LOOPS       busy-looping processes beside the live-event phase, started and
//                             stopped by the bench (default one per core; 0: none)
//      BENCH_TRACE            0: no per-hop marks (platform/event-trace.ts; default on)
//      BENCH_PHASES           `events`: only the live-event phase (default: every phase)
//      BENCH_TIMEOUT_MS       one task, from its POST to `done` (default 60000; the event phase gets
//                             this plus its printing time)
//      BENCH_RUNNER_STARTS    bare `agentry runner` starts timed as an aside (default 10)
//      BENCH_STOP_GRACE_MS    a runner's SIGTERM → SIGKILL grace when its workspace goes (default 3000)
//      BENCH_LOG_LEVEL        the stack's log level (default silent)
import { mkdtemp } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { wallMs } from '../support/child.js';
import { loadAverage as load, ratio as formatRatio } from '../support/format.js';
import { progress } from '../support/stats.js';
import type { Summary } from '../support/stats.js';
import { within } from '../support/wait.js';
import type { Client } from './client.js';
import {
  EVENTS_ONLY,
  EVENT_COUNT,
  EVENT_RATE,
  RUNNER_STARTS,
  TASKS,
  TIMEOUT_MS,
  TRACE,
  WARMUP,
  interruption,
} from './config.js';
import { liveEventPhase } from './event-phase.js';
import { appendSyncFloor, bashFloor, runnerStartFloor } from './floors.js';
import { ms, report } from './report.js';
import { startStack, stopStack } from './stack.js';
import type { Stack } from './stack.js';
import { startOnExistingWorkspace, startOnNewWorkspaces, startOnce } from './starts.js';
import type { StartRun } from './starts.js';

const ratio = (a: number, b: number): string => formatRatio(a, b, 1);

interface Starts {
  bash: Summary;
  runnerStart: Summary;
  fresh: StartRun;
  existing: StartRun;
}

/** Starts the stack and answers a client of it. */
async function started(stack: Stack): Promise<Client> {
  progress('starting the embedded stack');
  const key = await within('starting the embedded stack', TIMEOUT_MS, interruption.signal, () =>
    startStack(stack),
  );
  const { api } = stack;
  if (api === undefined) throw new Error('the API did not start');
  return { api, key };
}

/** The start-latency phases, each figure printed as it comes; answers the figures and a workspace left running. */
async function measureStarts(stack: Stack, client: Client): Promise<{ starts: Starts; workspaceId: string }> {
  const bash = await bashFloor();
  report('floor: bash -c "echo ready" spawn → first stdout line', bash, 'p95');
  progress('bare runner starts');
  const runnerStart = await runnerStartFloor(stack.dir, RUNNER_STARTS);
  report('aside: agentry runner (from source) spawn → listening line', runnerStart, 'p95');
  progress('start latency on new workspaces');
  const fresh = await startOnNewWorkspaces(client);
  report('new workspace: POST /v1/tasks → 201', fresh.post, 'p95');
  report('new workspace: POST /v1/tasks → init event', fresh.init, 'p95');
  report('new workspace: POST /v1/tasks → first text event', fresh.firstText, 'p95');
  report('aside: DELETE /v1/agent-computers/:id → removed from the store', fresh.deleted, 'p95');

  progress('start latency on an existing workspace');
  const workspace = await startOnce(client, undefined);
  const existing = await startOnExistingWorkspace(client, workspace.workspaceId);
  report('existing workspace: POST /v1/tasks → 201', existing.post, 'p95');
  report('existing workspace: POST /v1/tasks → init event', existing.init, 'p95');
  report('existing workspace: POST /v1/tasks → first text event', existing.firstText, 'p95');
  return { starts: { bash, runnerStart, fresh, existing }, workspaceId: workspace.workspaceId };
}

function printStartSummary({ bash, runnerStart, fresh, existing }: Starts): void {
  console.log(
    `start, new workspace (init) / bash floor:       ${ratio(fresh.init.p50, bash.p50)} / ${ratio(fresh.init.p95, bash.p95)}`,
  );
  console.log(
    `start, existing workspace (init) / bash floor:  ${ratio(existing.init.p50, bash.p50)} / ${ratio(existing.init.p95, bash.p95)}`,
  );
  console.log(
    `start, new / existing workspace (init):         ${ratio(fresh.init.p50, existing.init.p50)} / ${ratio(fresh.init.p95, existing.init.p95)}`,
  );
  console.log(
    `first text, existing workspace / bash floor:    ${ratio(existing.firstText.p50, bash.p50)} / ${ratio(existing.firstText.p95, bash.p95)}`,
  );
  console.log(
    `bare runner start / new-workspace start (p50):  ${((runnerStart.p50 / fresh.init.p50) * 100).toFixed(0)}%`,
  );
}

/** Every phase in turn (or only the live events), then the summary. */
async function measure(stack: Stack): Promise<void> {
  const client = await started(stack);
  let starts: Starts | undefined;
  let workspaceId: string;
  if (EVENTS_ONLY) {
    workspaceId = (await startOnce(client, undefined)).workspaceId;
  } else {
    ({ starts, workspaceId } = await measureStarts(stack, client));
  }
  const { pipe, live } = await liveEventPhase(stack.dir, client, workspaceId);
  if (!EVENTS_ONLY) {
    progress('asides');
    const sync = await appendSyncFloor(stack.dir);
    report('aside: append + fdatasync of one event line on the data disk', sync, 'p99');
  }
  console.log(`load average at the end: ${load()}`);
  console.log('\nsummary (p50 / tail)');
  if (starts !== undefined) printStartSummary(starts);
  console.log(
    `live events / direct pipe (p50 / p99):          ${ratio(live.latency.p50, pipe.latency.p50)} / ${ratio(live.latency.p99, pipe.latency.p99)}`,
  );
  console.log(
    `live events under load (p50 / p99):             ${ms(live.latency.p50)} / ${ms(live.latency.p99)}`,
  );
}

const stack: Stack = {
  dir: await mkdtemp(join(tmpdir(), 'agentry-bench-tasks-')),
  api: undefined,
  operator: undefined,
  runtime: undefined,
};
// Before anything marks: the API in this process and the runners (stack.ts) trace each event's hops.
if (TRACE) process.env.AGENTRY_EVENT_TRACE = '1';
let passed = false;
try {
  console.log(
    `task latency: ${TASKS} tasks per phase (+${WARMUP} warm-up), ${EVENT_COUNT} events at ${EVENT_RATE}/s; ` +
      `${availableParallelism()} CPUs, node ${process.version}, load average ${load()}`,
  );
  const clockSkew = Date.now() - wallMs();
  console.log(
    `clock check: Date.now() − (timeOrigin + performance.now()) = ${ms(clockSkew)} (expect about −1…0)`,
  );
  await measure(stack);
  passed = true;
} catch (err) {
  console.error('\nbenchmark failed:', err);
} finally {
  await stopStack(stack);
  interruption.dispose();
}
process.exitCode = passed ? 0 : 1;
