// Task start latency and live event latency on the embedded default (API server, operator and real
// runner processes in this process and its children, nothing faked), each against a floor measured
// in the same run:
// - start latency, POST /v1/tasks → the task's first `init` event on GET /v1/tasks/:id/events (the
//   stream opened right after the POST), on a new workspace (a new runner process) and on an existing
//   one, sequentially; floor: a bare `bash -c 'echo ready'` spawn until its first stdout line;
// - live event latency at ~1,000 events/s: a `shell` task runs a Python script printing its wall clock
//   (time.time_ns) once per millisecond, and the client compares each `text` event's content with its
//   own wall clock on arrival; floor: the same script spawned here, its stdout read the same way.
// The `shell` executor's `init` is the runner's own, sent before bash starts, so the first `text`
// event ("ready") is printed too: that one includes the spawn the bash floor measures.
// Asides, to explain the figures: a bare `agentry runner` start, a workspace deletion, and one
// append + fdatasync (the runner makes each event durable, one at a time, before serving it).
// Progress goes to stderr, figures to stdout. Other load on the machine shows in both the floors and
// the figures; the load average is printed at the start and the end.
//
// Run: npm run bench:tasks
// Env: BENCH_TASKS            tasks per start-latency phase (default 50)
//      BENCH_WARMUP           tasks per start-latency phase run first and not counted (default 1)
//      BENCH_EVENT_RATE       events per second of the live-event phase (default 1000)
//      BENCH_EVENT_SECONDS    how long the live-event phase prints (default 5)
//      BENCH_TIMEOUT_MS       one task, from its POST to `done` (default 60000; the event phase gets
//                             this plus its printing time)
//      BENCH_RUNNER_STARTS    bare `agentry runner` starts timed as an aside (default 10)
//      BENCH_STOP_GRACE_MS    a runner's SIGTERM → SIGKILL grace when its workspace goes (default 3000)
//      BENCH_LOG_LEVEL        the stack's log level (default silent)
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, open, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createParser } from 'eventsource-parser';
import { Registry } from 'prom-client';
import { z } from 'zod';
import { AgentComputerType, OrganizationType } from '../crds/index.js';
import { startOperator } from '../operator/operator.js';
import type { RunningOperator } from '../operator/operator.js';
import { ProcessRuntime } from '../operator/runtimes/process.js';
import { ExecutorCatalog } from '../platform/executor-catalog.js';
import { ensureInstallationKey } from '../platform/installation-key.js';
import { createLogger } from '../platform/log.js';
import { TaskEventSchema } from '../platform/runner-protocol.js';
import type { TaskEvent } from '../platform/runner-protocol.js';
import { EmbeddedStore } from '../platform/store/embedded.js';
import { isStoreError } from '../platform/store/types.js';
import { CONTROL_NAMESPACE, call, startTestApi } from '../test/support/api-server.js';
import type { TestApi } from '../test/support/api-server.js';
import { REPOSITORY_RUNNER_COMMAND } from '../test/support/runner-command.js';
import { progress, summarize } from './stats.js';
import type { Summary } from './stats.js';

const positive = (name: string, fallback: number): number => {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number ≥ 0, not ${raw}`);
  return value;
};

const TASKS = Math.max(1, Math.round(positive('BENCH_TASKS', 50)));
const WARMUP = Math.round(positive('BENCH_WARMUP', 1));
const EVENT_RATE = Math.max(1, positive('BENCH_EVENT_RATE', 1000));
const EVENT_SECONDS = Math.max(0.1, positive('BENCH_EVENT_SECONDS', 5));
const EVENT_COUNT = Math.round(EVENT_RATE * EVENT_SECONDS);
const RUNNER_STARTS = Math.round(positive('BENCH_RUNNER_STARTS', 10));
/** The process runtime's SIGTERM → SIGKILL grace for runners (3 s as in the end-to-end tests). */
const STOP_GRACE_MS = positive('BENCH_STOP_GRACE_MS', 3000);
const TIMEOUT_MS = Math.max(1000, positive('BENCH_TIMEOUT_MS', 60_000));
const LOG_LEVEL = z
  .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  .parse(process.env.BENCH_LOG_LEVEL ?? 'silent');
const ORG = 'bench';
const NAMESPACE = `agentry-org-${ORG}`;
/** Room for the deleted workspaces the operator has not finished removing yet. */
const AGENT_COMPUTER_LIMIT = 100;

/** Aborted by SIGINT/SIGTERM: every wait below gives up, and the stack is stopped on the way out. */
const interrupted = new AbortController();
const onSignal = (signal: NodeJS.Signals): void => {
  console.error(`\n${signal}: stopping`);
  interrupted.abort(new Error(`interrupted by ${signal}`));
};
process.once('SIGINT', onSignal);
process.once('SIGTERM', onSignal);

// ---------------------------------------------------------------------------------------------
// Helpers

/** Wall clock in ms with sub-ms resolution, comparable with Python's time.time_ns() / 1e6. */
const wallMs = (): number => performance.timeOrigin + performance.now();

const ms = (value: number): string => `${value.toFixed(value < 10 ? 2 : 1)} ms`;

function report(label: string, s: Summary, tail: 'p95' | 'p99'): void {
  console.log(
    `${label}: p50 ${ms(s.p50)}, ${tail} ${ms(s[tail])} (min ${ms(s.min)}, max ${ms(s.max)}, n=${s.n})`,
  );
}

/** Rejects with `what` after `timeoutMs`, or when the run is interrupted. */
/**
 * Runs `work` with a signal that aborts after `timeoutMs` or on interruption, and gives up on it then
 * even if it ignores the signal (its leftovers are stopped with the stack).
 */
async function within<T>(
  what: string,
  timeoutMs: number,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const signal = AbortSignal.any([interrupted.signal, AbortSignal.timeout(timeoutMs)]);
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => {
      reject(
        interrupted.signal.aborted
          ? (interrupted.signal.reason as Error)
          : new Error(`${what}: no result within ${timeoutMs} ms`),
      );
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
  aborted.catch(() => undefined); // rejected only when it wins the race, or after it
  try {
    return await Promise.race([work(signal), aborted]);
  } catch (err) {
    if (interrupted.signal.aborted) throw interrupted.signal.reason;
    if (signal.aborted) throw new Error(`${what}: no result within ${timeoutMs} ms`, { cause: err });
    throw err;
  } finally {
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
  }
}

async function until<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    interrupted.signal.throwIfAborted();
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

// ---------------------------------------------------------------------------------------------
// Floors: what a process spawn and a pipe cost on this machine, with no platform in between.

/** Spawns `command`, calls `onLine(line, arrivalWallMs)` per stdout line; resolves on exit 0. */
function spawnLines(
  command: string,
  args: string[],
  signal: AbortSignal,
  onLine: (line: string, arrival: number) => 'stop' | undefined,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'], signal });
    let rest = '';
    let stopped = false;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const arrival = wallMs();
      if (stopped) return;
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        if (onLine(line, arrival) === 'stop') {
          stopped = true;
          break;
        }
      }
    });
    child.once('error', reject);
    child.once('close', (code, how) => {
      if (code === 0) resolve();
      else
        reject(
          new Error(`${command} ${how === null ? `exited with ${String(code)}` : `was killed by ${how}`}`),
        );
    });
  });
}

async function bashFloor(): Promise<Summary> {
  const samples: number[] = [];
  for (let i = 0; i < WARMUP + TASKS; i++) {
    const start = wallMs();
    let first: number | undefined;
    await within('bash -c "echo ready"', TIMEOUT_MS, (signal) =>
      spawnLines('bash', ['-c', 'echo ready'], signal, (line, arrival) => {
        if (line === 'ready') first ??= arrival;
        return undefined;
      }),
    );
    if (first === undefined) throw new Error('bash -c "echo ready" printed no "ready" line');
    if (i >= WARMUP) samples.push(first - start);
  }
  return summarize(samples);
}

/**
 * Python printing its wall clock (ns) once per period, on a schedule of its own (sleeps to the next
 * tick, so a late tick does not shift the others), flushing each line. No single quotes: the
 * `shell` executor gets it inside '…'.
 */
const CLOCK_SCRIPT = [
  'import sys, time',
  `n = ${EVENT_COUNT}`,
  `period = ${Math.round(1e9 / EVENT_RATE)}`,
  'start = time.monotonic_ns()',
  'for i in range(n):',
  '    delay = start + i * period - time.monotonic_ns()',
  '    if delay > 0:',
  '        time.sleep(delay / 1e9)',
  '    sys.stdout.write(str(time.time_ns()) + "\\n")',
  '    sys.stdout.flush()',
].join('\n');

interface EventRun {
  latency: Summary;
  /** Lines received; EVENT_COUNT expected. */
  received: number;
  /** Latency of the last line: how far behind the tail was when the producer stopped. */
  last: number;
  /** From the first line's arrival to the last one's. */
  spanMs: number;
  /** p50 and max per second of the producer's clock: shows a start-up backlog or a stall. */
  perSecond: { p50: number; max: number }[];
}

/** Latency of clock lines (`content` ns) arriving at `arrival` (wall ms). */
class ClockLines {
  readonly latencies: number[] = [];
  private readonly bySecond: number[][] = [];
  private firstPrinted: number | undefined;
  first: number | undefined;
  lastArrival = 0;

  add(content: string, arrival: number): void {
    if (!/^\d+$/.test(content)) throw new Error(`not a clock line: ${JSON.stringify(content.slice(0, 80))}`);
    const printed = Number(content) / 1e6;
    const latency = arrival - printed;
    this.latencies.push(latency);
    this.firstPrinted ??= printed;
    const second = Math.floor((printed - this.firstPrinted) / 1000);
    (this.bySecond[second] ??= []).push(latency);
    this.first ??= arrival;
    this.lastArrival = arrival;
  }

  result(): EventRun {
    return {
      latency: summarize(this.latencies),
      received: this.latencies.length,
      last: this.latencies.at(-1) ?? Number.NaN,
      spanMs: this.first === undefined ? 0 : this.lastArrival - this.first,
      perSecond: this.bySecond.map((values) => {
        const s = summarize(values);
        return { p50: s.p50, max: s.max };
      }),
    };
  }
}

async function pipeFloor(): Promise<EventRun> {
  const lines = new ClockLines();
  await within('the clock script spawned directly', TIMEOUT_MS + EVENT_SECONDS * 1000, (signal) =>
    spawnLines('python3', ['-c', CLOCK_SCRIPT], signal, (line, arrival) => {
      lines.add(line, arrival);
      return undefined;
    }),
  );
  return lines.result();
}

/**
 * What a new workspace's runner process costs before the operator can use it: `agentry runner` as the
 * process runtime starts it (from this repository's TypeScript, compiled on load), spawn → its
 * listening line on stdout. The runtime itself finds that line by polling the runner's log file.
 */
async function runnerStartFloor(dir: string, count: number): Promise<Summary> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const home = join(dir, `runner-start-${i}`);
    await mkdir(join(home, 'code'), { recursive: true });
    const env = {
      ...process.env,
      AGENTRY_RUNNER_TOKEN: 'b'.repeat(48),
      AGENTRY_RUNNER_PORT: '0',
      AGENTRY_RUNNER_HOST: '127.0.0.1',
      AGENTRY_RUNNER_WORKDIR: join(home, 'code'),
      AGENTRY_RUNNER_STATE_DIR: join(home, 'state'),
      AGENTRY_LOG_LEVEL: 'silent',
    };
    const elapsed = await within('agentry runner to print its listening line', TIMEOUT_MS, (signal) => {
      const start = wallMs();
      return new Promise<number>((resolve, reject) => {
        const child = spawn(REPOSITORY_RUNNER_COMMAND.command, REPOSITORY_RUNNER_COMMAND.args, {
          cwd: home,
          env,
          stdio: ['ignore', 'pipe', 'ignore'],
          signal,
        });
        let listening: number | undefined;
        let text = '';
        child.stdout.setEncoding('utf8');
        child.stdout.on('data', (chunk: string) => {
          text += chunk;
          if (listening === undefined && text.includes('agentry runner listening on ')) {
            listening = wallMs() - start;
            child.kill('SIGTERM');
          }
        });
        child.once('error', reject);
        child.once('close', (code, how) => {
          if (listening !== undefined) resolve(listening);
          else reject(new Error(`agentry runner ended (${how ?? String(code)}) before listening`));
        });
      });
    });
    samples.push(elapsed);
  }
  return summarize(samples);
}

/** What one durable event costs the runner's log on this disk: an append and an fdatasync. */
async function appendSyncFloor(dir: string): Promise<Summary> {
  const file = await open(join(dir, 'append-sync.jsonl'), 'a', 0o600);
  const line = `${JSON.stringify({ seq: 0, timestamp: new Date().toISOString(), promptId: 'x', eventType: 'text', payload: { content: '1234567890123456789', stream: 'stdout' } })}\n`;
  const samples: number[] = [];
  try {
    for (let i = 0; i < 1000; i++) {
      const start = performance.now();
      await file.appendFile(line, 'utf8');
      await file.datasync();
      samples.push(performance.now() - start);
    }
  } finally {
    await file.close();
  }
  return summarize(samples);
}

// ---------------------------------------------------------------------------------------------
// The embedded stack, as test/integration/tasks-end-to-end starts it.

interface Stack {
  dir: string;
  api: TestApi | undefined;
  operator: RunningOperator | undefined;
  runtime: ProcessRuntime | undefined;
}

async function startStack(stack: Stack): Promise<string> {
  const store = await EmbeddedStore.open(join(stack.dir, 'store'));
  const logger = createLogger({ level: LOG_LEVEL });
  let notify: (ns: string, name: string) => void = () => undefined;
  stack.runtime = new ProcessRuntime({
    dataDir: stack.dir,
    runnerCommand: REPOSITORY_RUNNER_COMMAND,
    logger,
    stopGraceMs: STOP_GRACE_MS,
    onChange: (ns, name) => {
      notify(ns, name);
    },
  });
  try {
    stack.operator = await startOperator({
      store,
      logger,
      registry: new Registry(),
      runtimes: new Map([['process', stack.runtime]]),
      defaultRuntime: 'process',
      controlNamespace: CONTROL_NAMESPACE,
      installationKey: await ensureInstallationKey(store, CONTROL_NAMESPACE),
      executors: new ExecutorCatalog(),
    });
  } catch (err) {
    await store.close();
    throw err;
  }
  notify = stack.operator.notifyAgentComputer;
  stack.api = await startTestApi({ store });
  const key = await stack.api.key({ org: ORG });
  await raiseWorkspaceLimit(stack.api);
  return key;
}

/** Deleted workspaces stop counting at once, but leave room anyway for ones a failed run left behind. */
async function raiseWorkspaceLimit(api: TestApi): Promise<void> {
  // The operator writes the new organization's status meanwhile: read again on a conflict.
  for (let attempt = 1; ; attempt++) {
    const org = await api.store.get(OrganizationType, undefined, ORG);
    if (org === undefined) throw new Error(`organization ${ORG} is missing`);
    if (org.spec.limits.agentComputers >= AGENT_COMPUTER_LIMIT) break;
    try {
      await api.store.replace(OrganizationType, {
        ...org,
        spec: { ...org.spec, limits: { ...org.spec.limits, agentComputers: AGENT_COMPUTER_LIMIT } },
      });
      break;
    } catch (err) {
      if (!isStoreError(err, 'Conflict') || attempt >= 10) throw err;
      await sleep(20);
    }
  }
  await until('the API to see the raised agentComputers limit', 10_000, () =>
    Promise.resolve(
      (api.readModel.organizations.get(undefined, ORG)?.spec.limits.agentComputers ?? 0) >=
        AGENT_COMPUTER_LIMIT
        ? true
        : undefined,
    ),
  );
}

/** Deletes every workspace and waits for the runners to go, then stops everything; never throws. */
async function stopStack(stack: Stack): Promise<void> {
  const step = async (what: string, work: () => Promise<unknown>): Promise<void> => {
    try {
      await work();
    } catch (err) {
      console.error(`cleanup: ${what} failed:`, err);
    }
  };
  const { api, operator, runtime } = stack;
  if (api !== undefined && operator !== undefined) {
    await step('deleting the workspaces', async () => {
      const { items } = await api.store.list(AgentComputerType);
      await Promise.all(
        items.map((ac) => api.store.delete(AgentComputerType, ac.metadata.namespace, ac.metadata.name)),
      );
      const deadline = Date.now() + 60_000;
      while ((await api.store.list(AgentComputerType)).items.length > 0 && Date.now() < deadline)
        await sleep(100);
    });
  }
  if (operator !== undefined) await step('operator.stop()', () => operator.stop());
  if (runtime !== undefined) await step('runtime.close()', () => runtime.close({ stopRunners: true }));
  if (api !== undefined) await step('api.stop()', () => api.stop());
  await step('removing the data directory', () => rm(stack.dir, { recursive: true, force: true }));
}

// ---------------------------------------------------------------------------------------------
// Tasks through the API

const CreatedSchema = z.object({ id: z.string(), workspaceId: z.string() });
const DoneSchema = z.object({ status: z.string(), lastSeq: z.number(), finalResult: z.string().nullable() });

interface Client {
  api: TestApi;
  key: string;
}

async function createTask(
  client: Client,
  body: { prompt: string; workspaceId?: string },
): Promise<z.infer<typeof CreatedSchema>> {
  const res = await call(client.api, '/v1/tasks', {
    key: client.key,
    method: 'POST',
    body: { executor: 'shell', ...body },
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`POST /v1/tasks answered ${res.status}: ${text}`);
  return CreatedSchema.parse(JSON.parse(text));
}

/**
 * Reads GET /v1/tasks/:id/events until `done`, calling `onEvent` with each event and the wall time
 * its chunk arrived (taken before parsing). Rejects on a non-200 answer, a stream that ends without
 * `done`, or `signal`.
 */
async function readEvents(
  client: Client,
  taskId: string,
  signal: AbortSignal,
  onEvent: (event: TaskEvent, arrival: number) => void,
): Promise<z.infer<typeof DoneSchema>> {
  const abort = new AbortController();
  const stop = (): void => {
    abort.abort(signal.reason);
  };
  signal.addEventListener('abort', stop, { once: true });
  try {
    const res = await fetch(`${client.api.url}/v1/tasks/${taskId}/events`, {
      headers: { 'api-key': client.key, accept: 'text/event-stream' },
      signal: abort.signal,
    });
    if (res.status !== 200 || res.body === null) {
      throw new Error(`GET /v1/tasks/${taskId}/events answered ${res.status}: ${await res.text()}`);
    }
    let done: z.infer<typeof DoneSchema> | undefined;
    let arrival = 0;
    const parser = createParser({
      onEvent(message) {
        const data: unknown = JSON.parse(message.data);
        if (message.event === 'done') done = DoneSchema.parse(data);
        else onEvent(TaskEventSchema.parse(data), arrival);
      },
    });
    const decoder = new TextDecoder();
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      arrival = wallMs();
      parser.feed(decoder.decode(chunk, { stream: true }));
      if (done !== undefined) return done;
    }
    throw new Error(`the event stream of task ${taskId} ended without done`);
  } finally {
    signal.removeEventListener('abort', stop);
    abort.abort();
  }
}

interface StartSample {
  /** POST sent → 201 received. */
  post: number;
  /** POST sent → `init` arrived. */
  init: number;
  /** POST sent → the first `text` event ("ready") arrived: the comparable of the bash floor. */
  firstText: number;
  workspaceId: string;
}

/** One `echo ready` task, from its POST to `done`; the stream is opened as soon as the POST answers. */
async function startOnce(client: Client, workspaceId: string | undefined): Promise<StartSample> {
  return within('a task from POST to done', TIMEOUT_MS, async (signal) => {
    const start = wallMs();
    const task = await createTask(client, {
      prompt: 'echo ready',
      ...(workspaceId === undefined ? {} : { workspaceId }),
    });
    const post = wallMs() - start;
    let init: number | undefined;
    let firstText: number | undefined;
    const done = await readEvents(client, task.id, signal, (event, arrival) => {
      if (event.eventType === 'init') init ??= arrival - start;
      if (event.eventType === 'text') firstText ??= arrival - start;
    });
    if (done.status !== 'completed') throw new Error(`task ${task.id} ended ${done.status}, not completed`);
    if (init === undefined || firstText === undefined)
      throw new Error(`task ${task.id} completed without an init and a text event`);
    return { post, init, firstText, workspaceId: task.workspaceId };
  });
}

async function deleteWorkspace(client: Client, id: string): Promise<void> {
  const res = await call(client.api, `/v1/agent-computers/${id}`, { key: client.key, method: 'DELETE' });
  if (res.status !== 204 && res.status !== 200 && res.status !== 202)
    throw new Error(`DELETE /v1/agent-computers/${id} answered ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
  // Gone from the store once the operator has stopped its runner: nothing of it overlaps the next task.
  await until(`workspace ${id} to be removed`, TIMEOUT_MS, async () =>
    (await client.api.store.get(AgentComputerType, NAMESPACE, id)) === undefined ? true : undefined,
  );
}

interface StartRun {
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

async function startOnNewWorkspaces(client: Client): Promise<StartRun & { deleted: Summary }> {
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

async function startOnExistingWorkspace(client: Client, workspaceId: string): Promise<StartRun> {
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

async function liveEvents(client: Client, workspaceId: string): Promise<EventRun> {
  const lines = new ClockLines();
  await within('the clock task', TIMEOUT_MS + EVENT_SECONDS * 1000, async (signal) => {
    const task = await createTask(client, { prompt: `python3 -c '${CLOCK_SCRIPT}'`, workspaceId });
    const seqs: number[] = [];
    let promptId: string | undefined;
    const done = await readEvents(client, task.id, signal, (event, arrival) => {
      seqs.push(event.seq);
      promptId ??= event.promptId;
      if (event.eventType !== 'text') return;
      const content = event.payload.content;
      if (typeof content !== 'string') throw new Error('a text event without content');
      if (event.payload.stream === 'stderr') throw new Error(`the clock script wrote to stderr: ${content}`);
      lines.add(content, arrival);
    });
    if (done.status !== 'completed') throw new Error(`the clock task ended ${done.status}, not completed`);
    if (lines.latencies.length !== EVENT_COUNT) {
      // Evidence for a report: what the stream delivered against what the runner recorded.
      const gaps = seqs.filter((seq, i) => i > 0 && seq !== (seqs[i - 1] ?? -1) + 1).length;
      let recorded = 'unknown';
      if (promptId !== undefined) {
        const res = await call(client.api, `/v1/tasks/${task.id}/prompts/${promptId}/events`, {
          key: client.key,
        });
        const page = z
          .object({ events: z.array(TaskEventSchema), lastSeq: z.number() })
          .safeParse(await res.json());
        recorded = page.success
          ? `${page.data.events.filter((e) => e.eventType === 'text').length} text events, lastSeq ${page.data.lastSeq}`
          : `unreadable (${res.status})`;
      }
      console.log(
        `  the stream had ${seqs.length} events, seq ${seqs[0] ?? '-'}…${seqs.at(-1) ?? '-'} with ${gaps} gaps; ` +
          `done.lastSeq ${done.lastSeq}; the prompt's recorded events now: ${recorded}`,
      );
    }
  });
  return lines.result();
}

function reportEvents(label: string, run: EventRun): void {
  report(label, run.latency, 'p99');
  const rate = run.spanMs > 0 ? ((run.received - 1) / run.spanMs) * 1000 : Number.NaN;
  console.log(
    `  ${run.received}/${EVENT_COUNT} lines, last line ${ms(run.last)} late, ` +
      `first→last arrival ${(run.spanMs / 1000).toFixed(2)} s (${rate.toFixed(0)} lines/s)`,
  );
  const seconds = run.perSecond.map((s, i) => `${i}s ${s.p50.toFixed(1)}/${s.max.toFixed(1)}`);
  console.log(`  per second of printing, p50/max ms: ${seconds.join(', ')}`);
  if (run.received !== EVENT_COUNT) console.log(`  WARNING: expected ${EVENT_COUNT} lines`);
}

// ---------------------------------------------------------------------------------------------
// Main

const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const ratio = (a: number, b: number): string => `${(a / b).toFixed(1)}x`;

const stack: Stack = {
  dir: await mkdtemp(join(tmpdir(), 'agentry-bench-tasks-')),
  api: undefined,
  operator: undefined,
  runtime: undefined,
};
let failed = false;
try {
  console.log(
    `task latency: ${TASKS} tasks per phase (+${WARMUP} warm-up), ${EVENT_COUNT} events at ${EVENT_RATE}/s; ` +
      `${availableParallelism()} CPUs, node ${process.version}, load average ${load()}`,
  );
  const clockSkew = Date.now() - wallMs();
  console.log(
    `clock check: Date.now() − (timeOrigin + performance.now()) = ${ms(clockSkew)} (expect about −1…0)`,
  );

  const bash = await bashFloor();
  report('floor: bash -c "echo ready" spawn → first stdout line', bash, 'p95');

  progress('starting the embedded stack');
  const key = await within('starting the embedded stack', TIMEOUT_MS, () => startStack(stack));
  const { api } = stack;
  if (api === undefined) throw new Error('the API did not start');
  const client: Client = { api, key };

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

  progress('live events');
  const pipe = await pipeFloor();
  reportEvents(`floor: clock script → direct pipe at ${EVENT_RATE}/s`, pipe);
  const live = await liveEvents(client, workspace.workspaceId);
  reportEvents(`live events: runner → SSE client at ${EVENT_RATE}/s`, live);

  progress('asides');
  const sync = await appendSyncFloor(stack.dir);
  report('aside: append + fdatasync of one event line on the data disk', sync, 'p99');
  console.log(`load average at the end: ${load()}`);

  console.log('\nsummary (p50 / tail)');
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
  console.log(
    `live events / direct pipe (p50 / p99):          ${ratio(live.latency.p50, pipe.latency.p50)} / ${ratio(live.latency.p99, pipe.latency.p99)}`,
  );
} catch (err) {
  failed = true;
  console.error('\nbenchmark failed:', err);
} finally {
  await stopStack(stack);
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
}
process.exitCode = failed ? 1 : 0;
