// Webhook delivery (operator/webhook) on the embedded store, each figure against a floor measured in
// the same run:
// - signing cost per delivery: WebhookSigningKeys.sign (Ed25519, Standard Webhooks `v1a`) of a real
//   delivery body, with one key and with two during a rotation, against Standard Webhooks' symmetric
//   `v1` scheme (HMAC-SHA256) over the same bytes;
// - delivery, transition → receiver: BENCH_WEBHOOKS webhooks (each its own loopback receiver answering
//   200 at once) subscribed to every event, and BENCH_TRANSITIONS task transitions (tasks × 5:
//   created, running, completed, a follow-up prompt running, completed) whose outbox entries are
//   written as the Task reconciler writes them (transitionEvents + outboxEntriesFor, in the status
//   write of the transition, at the version read, retried on Conflict); the delivery controller runs
//   on a ControllerManager as in the operator. Latency is from a high-resolution timestamp taken right
//   before the (successful) status write to the receiver having read the whole request (same
//   process, same clock). Twice: with the transitions written as fast as BENCH_WRITERS writers can
//   (the load), and paced at BENCH_RATE transitions/s (latency without a backlog);
// - floor: the same requests (bytes and headers the receivers got), POSTed by this process with
//   node:http straight to the same receivers, each released at the time its transition was written
//   in the measured run, with the controller's concurrency (4 in flight per webhook) and its
//   connection policy (a new connection per attempt);
// - asides: one status write on a quiet store (the store serializes writes: the bound on the rest),
//   the backlog case (all outboxes written with the controller stopped, then started), the raw POST
//   capacity at a few concurrency levels (and with keep-alive), and per phase the controller's
//   reconciles, its status writes and conflicts per delivery (counted by a wrapper around the store)
//   and the warnings it logged.
// Every delivery is checked to arrive exactly once (by webhook-id) and every outbox to drain.
// The receivers, the floor's client and the controller share this process (and its event loop).
// Progress goes to stderr, figures to stdout; the load average is printed at the start and the end.
//
// Run: npm run bench:webhooks
// Env: BENCH_TRANSITIONS   task transitions per phase (default 1000)
//      BENCH_WEBHOOKS      webhooks, each with its own receiver (default 3)
//      BENCH_SIGNS         signatures per signing measurement (default 10000)
//      BENCH_WRITERS       concurrent transition writers, as the Task controller's workers (default 4)
//      BENCH_RATE          transitions/s of the paced phase (default 50, i.e. 150 deliveries/s with 3
//                          webhooks: below what the controller keeps up with on 2 cores; 0 skips it)
//      BENCH_TIMEOUT_MS    one phase, from its first write to its last delivery (default 120000)
//      BENCH_LOG_LEVEL     the controller's log on stderr at this level (default: none; its warnings
//                          and errors are counted either way)
import { createHmac, createPublicKey, randomBytes, randomUUID, verify } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, createServer, request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders, OutgoingHttpHeaders, Server } from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Registry } from 'prom-client';
import { z } from 'zod';
import {
  OrganizationSpecSchema,
  OrganizationType,
  TaskType,
  WebhookType,
  apiVersionOf,
} from '../crds/index.js';
import type {
  OutboxEntry,
  PromptStatusEntry,
  Task,
  TaskStatus,
  Webhook,
  WebhookEventType,
} from '../crds/index.js';
import type { KubeObject, ResourceType } from '../crds/resource.js';
import { ControllerManager } from '../operator/controller/index.js';
import { transitionEvents, outboxEntriesFor } from '../operator/task/webhook-events.js';
import { deliveryBody } from '../operator/webhook/delivery-body.js';
import { addWebhookDeliveryController } from '../operator/webhook/controller.js';
import { InstallationKey } from '../platform/installation-key.js';
import { createLogger } from '../platform/log.js';
import { EmbeddedStore } from '../platform/store/embedded.js';
import { isStoreError } from '../platform/store/types.js';
import type {
  DeleteOptions,
  ListOptions,
  ListResult,
  ResourceStore,
  StatusWriteOptions,
  Watch,
  WatchEvent,
  WatchOptions,
} from '../platform/store/types.js';
import { WebhookSigningKeys } from '../platform/webhook-signing.js';
import { progress, summarize } from './stats.js';
import type { Summary } from './stats.js';

const positive = (name: string, fallback: number): number => {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number ≥ 0, not ${raw}`);
  return value;
};

const TRANSITIONS = Math.max(1, Math.round(positive('BENCH_TRANSITIONS', 1000)));
const WEBHOOKS = Math.max(1, Math.round(positive('BENCH_WEBHOOKS', 3)));
const SIGNS = Math.max(1, Math.round(positive('BENCH_SIGNS', 10_000)));
const WRITERS = Math.max(1, Math.round(positive('BENCH_WRITERS', 4)));
const RATE = positive('BENCH_RATE', 50);
const TIMEOUT_MS = Math.max(1000, positive('BENCH_TIMEOUT_MS', 120_000));
/** Given: the controller's log goes to stderr at this level. Either way its warnings are counted. */
const LOG_LEVEL = z
  .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  .optional()
  .parse(process.env.BENCH_LOG_LEVEL);

const STEPS_PER_TASK = 5;
const TASKS = Math.ceil(TRANSITIONS / STEPS_PER_TASK);
const DELIVERIES = TRANSITIONS * WEBHOOKS;
const CONTROL = 'agentry-system';
const ORG = 'bench';
const NS = `agentry-org-${ORG}`;
const PUBLIC_URL = 'https://agentry.example';
/** The controller's defaults (operator/webhook/controller.ts), which the floor copies. */
const PER_WEBHOOK_CONCURRENCY = 4;
const DELIVERY_WORKERS = 8;
/** One floor POST, as the controller's attempt timeout. */
const POST_TIMEOUT_MS = 15_000;
const PROMPT_1 = '11111111-2222-4333-8444-555555555555';
const PROMPT_2 = '66666666-7777-4888-9999-aaaaaaaaaaaa';
/** A final answer of a realistic size: the completed task's delivery body comes to about 1 KB. */
const FINAL_RESULT =
  'Done. I updated the retry logic in src/queue/worker.ts so a failed job is re-enqueued with ' +
  'exponential back-off (base 2 s, cap 5 min) instead of being dropped, added unit tests for the ' +
  'back-off schedule and for the poison-message path, and ran the whole suite: 214 tests pass. ' +
  'The change is on branch fix/retry-backoff; the diff touches 3 files (+148, -37). I did not ' +
  'change the public API. One follow-up worth considering: the dead-letter queue has no alerting; ' +
  'a metric on its depth would make stuck jobs visible before users notice them.';

/** Aborted by SIGINT/SIGTERM: every wait below gives up, and everything is stopped on the way out. */
const interrupted = new AbortController();
// Every sleeping floor worker listens to it (up to 16 per webhook).
setMaxListeners(0, interrupted.signal);
const onSignal = (signal: NodeJS.Signals): void => {
  console.error(`\n${signal}: stopping`);
  interrupted.abort(new Error(`interrupted by ${signal}`));
};
process.once('SIGINT', onSignal);
process.once('SIGTERM', onSignal);

// ---------------------------------------------------------------------------------------------
// Helpers

const ms = (value: number): string => `${value.toFixed(value < 10 ? 2 : value < 100 ? 1 : 0)} ms`;
const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}x`;
const rate = (count: number, spanMs: number): string => `${((count / spanMs) * 1000).toFixed(0)}/s`;
const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

const latencyLine = (s: Summary): string =>
  `p50 ${ms(s.p50)}, p95 ${ms(s.p95)}, p99 ${ms(s.p99)}, max ${ms(s.max)} (n=${s.n})`;

/** Polls `check` until it answers true; a clear error after `timeoutMs` (`state` says how far it got). */
async function until(
  what: string,
  timeoutMs: number,
  check: () => boolean | Promise<boolean>,
  state: () => string,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    interrupted.signal.throwIfAborted();
    if (performance.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}: ${state()}`);
    await sleep(5);
  }
}

/** Runs `work` over `items` with `concurrency` in flight; the first failure rejects (the rest stop taking items). */
async function pool<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      interrupted.signal.throwIfAborted();
      const item = items[next++] as T;
      try {
        await work(item);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/** Sleeps until `performance.now()` reaches `at`. */
async function sleepUntil(at: number): Promise<void> {
  const wait = at - performance.now();
  if (wait > 0) await sleep(wait, undefined, { signal: interrupted.signal });
}

// ---------------------------------------------------------------------------------------------
// A store that counts the controller's status writes and their conflicts, by kind.

class CountingStore implements ResourceStore {
  readonly writes = new Map<string, number>();
  readonly conflicts = new Map<string, number>();

  constructor(private readonly inner: ResourceStore) {}

  reset(): void {
    this.writes.clear();
    this.conflicts.clear();
  }

  get<T extends KubeObject>(type: ResourceType<T>, namespace: string | undefined, name: string) {
    return this.inner.get(type, namespace, name);
  }

  list<T extends KubeObject>(type: ResourceType<T>, options?: ListOptions): Promise<ListResult<T>> {
    return this.inner.list(type, options);
  }

  watch<T extends KubeObject>(
    type: ResourceType<T>,
    options: WatchOptions,
    onEvent: (event: WatchEvent<T>) => void,
  ): Promise<Watch> {
    return this.inner.watch(type, options, onEvent);
  }

  create<T extends KubeObject>(type: ResourceType<T>, object: T): Promise<T> {
    return this.inner.create(type, object);
  }

  replace<T extends KubeObject>(type: ResourceType<T>, object: T): Promise<T> {
    return this.inner.replace(type, object);
  }

  async replaceStatus<T extends KubeObject>(
    type: ResourceType<T>,
    object: T,
    options?: StatusWriteOptions,
  ): Promise<T> {
    try {
      const written = await this.inner.replaceStatus(type, object, options);
      this.writes.set(type.kind, (this.writes.get(type.kind) ?? 0) + 1);
      return written;
    } catch (err) {
      if (isStoreError(err, 'Conflict'))
        this.conflicts.set(type.kind, (this.conflicts.get(type.kind) ?? 0) + 1);
      throw err;
    }
  }

  delete<T extends KubeObject>(
    type: ResourceType<T>,
    namespace: string | undefined,
    name: string,
    options?: DeleteOptions,
  ): Promise<T | undefined> {
    return this.inner.delete(type, namespace, name, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Receivers: loopback servers answering 200 at once, recording each request by webhook-id.

interface Arrival {
  /** performance.now() once the whole request was read. */
  at: number;
  webhook: string;
}

interface Captured {
  headers: IncomingHttpHeaders;
  body: string;
}

/** What the receivers got during one phase. */
class Recorder {
  readonly arrivals = new Map<string, Arrival[]>();
  /** The first request of each webhook-id: what the floor replays. */
  readonly requests = new Map<string, Captured>();
  count = 0;
  withoutId = 0;

  record(webhook: string, headers: IncomingHttpHeaders, body: string, at: number): void {
    this.count++;
    const id = headers['webhook-id'];
    if (typeof id !== 'string') {
      this.withoutId++;
      return;
    }
    const list = this.arrivals.get(id);
    if (list === undefined) {
      this.arrivals.set(id, [{ at, webhook }]);
      this.requests.set(id, { headers, body });
    } else list.push({ at, webhook });
  }
}

class Receiver {
  recorder = new Recorder();
  private server: Server | undefined;
  private port = 0;

  constructor(readonly webhook: string) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const at = performance.now();
        this.recorder.record(this.webhook, req.headers, Buffer.concat(chunks).toString('utf8'), at);
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address();
    if (address === null || typeof address !== 'object') throw new Error('the receiver has no port');
    this.port = address.port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => {
      server.close(() => {
        resolve();
      });
    });
  }
}

// ---------------------------------------------------------------------------------------------
// The environment: store, organization, webhooks, receivers, controller managers.

interface Env {
  dir: string;
  store: EmbeddedStore | undefined;
  counting: CountingStore | undefined;
  receivers: Receiver[];
  managers: ControllerManager[];
  registry: Registry | undefined;
}

const env: Env = {
  dir: await mkdtemp(join(tmpdir(), 'agentry-bench-webhooks-')),
  store: undefined,
  counting: undefined,
  receivers: [],
  managers: [],
  registry: undefined,
};

const storeOf = (): EmbeddedStore => {
  if (env.store === undefined) throw new Error('the store is not open');
  return env.store;
};

async function setUp(): Promise<void> {
  const store = await EmbeddedStore.open(join(env.dir, 'store'));
  env.store = store;
  env.counting = new CountingStore(store);
  await store.create(OrganizationType, {
    apiVersion: apiVersionOf(OrganizationType),
    kind: 'Organization',
    metadata: { name: ORG },
    spec: OrganizationSpecSchema.parse({ displayName: 'Bench', allowPrivateWebhookTargets: true }),
  });
  for (let i = 0; i < WEBHOOKS; i++) {
    const receiver = new Receiver(`wh-${i}`);
    env.receivers.push(receiver);
    await receiver.start();
    await store.create(WebhookType, {
      apiVersion: apiVersionOf(WebhookType),
      kind: 'Webhook',
      metadata: { name: receiver.webhook, namespace: NS },
      spec: {
        url: receiver.url,
        events: ['task.created', 'task.running', 'task.completed', 'task.failed', 'task.canceled'],
      },
    });
  }
}

const LogLineSchema = z.object({ level: z.string(), msg: z.string().optional() });

/** The controller's warnings and errors by message (and the whole log on stderr with BENCH_LOG_LEVEL). */
class LogCounter {
  readonly counts = new Map<string, number>();

  write(line: string): void {
    if (LOG_LEVEL !== undefined) process.stderr.write(line);
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      return;
    }
    const parsed = LogLineSchema.safeParse(json);
    if (!parsed.success || !['warn', 'error', 'fatal'].includes(parsed.data.level)) return;
    const key = `${parsed.data.level}: ${parsed.data.msg ?? ''}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  take(): string {
    const text = [...this.counts].map(([msg, count]) => `"${msg}" ×${count}`).join(', ');
    this.counts.clear();
    return text === '' ? 'none' : text;
  }
}

const logs = new LogCounter();

/** A ControllerManager running only the webhook-delivery controller, as the operator adds it. */
async function startDelivery(): Promise<ControllerManager> {
  const counting = env.counting;
  if (counting === undefined) throw new Error('the store is not open');
  const registry = new Registry();
  const logger = createLogger({ level: LOG_LEVEL ?? 'warn' }, logs);
  const manager = new ControllerManager({ store: counting, logger, registry, gracePeriodMs: 1000 });
  env.managers.push(manager);
  env.registry = registry;
  addWebhookDeliveryController(manager, {
    store: counting,
    logger,
    registry,
    controlNamespace: CONTROL,
    installationKey: new InstallationKey(randomBytes(32)),
    publicUrl: PUBLIC_URL,
    allowPrivateTargets: true,
  });
  await manager.start();
  return manager;
}

/** Stops everything that was started; never throws. */
async function tearDown(): Promise<void> {
  const step = async (what: string, work: () => Promise<unknown>): Promise<void> => {
    try {
      await work();
    } catch (err) {
      console.error(`cleanup: ${what} failed:`, err);
    }
  };
  for (const manager of env.managers.splice(0))
    await step('stopping a controller manager', () => manager.stop());
  for (const receiver of env.receivers.splice(0)) await step('stopping a receiver', () => receiver.stop());
  const store = env.store;
  env.store = undefined;
  if (store !== undefined) await step('closing the store', () => store.close());
  await step('removing the data directory', () => rm(env.dir, { recursive: true, force: true }));
}

// ---------------------------------------------------------------------------------------------
// Transitions, written as the Task reconciler writes them.

const promptEntry = (task: Task, id: string): PromptStatusEntry | undefined =>
  task.status?.prompts?.find((entry) => entry.id === id);

/** The status after step `step` of a task's life (without the outbox). */
function nextStatus(step: number, task: Task, now: Date): TaskStatus {
  const at = now.toISOString();
  const first = promptEntry(task, PROMPT_1) ?? { id: PROMPT_1, status: 'pending' };
  const second = promptEntry(task, PROMPT_2) ?? { id: PROMPT_2, status: 'pending' };
  const running = (entry: PromptStatusEntry): PromptStatusEntry => ({
    ...entry,
    status: 'running',
    dispatchedAt: at,
    startedAt: at,
    lastSeq: 2,
  });
  const done = (entry: PromptStatusEntry): PromptStatusEntry => ({
    ...entry,
    status: 'succeeded',
    completedAt: at,
    lastSeq: 57,
    finalResult: FINAL_RESULT,
  });
  switch (step) {
    case 0:
      return { status: 'running', prompts: [first] };
    case 1:
      return { status: 'running', prompts: [running(first)] };
    case 2:
      return { status: 'completed', completedAt: at, prompts: [done(first)] };
    case 3:
      return { status: 'running', prompts: [first, running(second)] };
    default:
      return { status: 'completed', completedAt: at, prompts: [first, done(second)] };
  }
}

function newTask(name: string): Task {
  return {
    apiVersion: apiVersionOf(TaskType),
    kind: 'Task',
    metadata: { name, namespace: NS },
    spec: {
      workspace: 'ws-bench',
      executor: 'claude',
      title: 'Make failed queue jobs retry with exponential back-off instead of being dropped',
      owner: 'ann',
      visibility: 'shared',
      githubUrl: 'https://github.com/example/queue-service',
      branch: 'main',
      prompts: [{ id: PROMPT_1, text: 'Fix the retry logic', submittedAt: new Date().toISOString() }],
    },
  };
}

/** What one transition left: its outbox entries and when its status write started. */
interface Written {
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
async function writeTransition(name: string, step: number): Promise<Written> {
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

interface Transition {
  task: string;
  step: number;
  /** Offset from the phase's start at which it is released (paced), or 0. */
  releaseMs: number;
}

/** Round-robin over the tasks: every task's step n before any task's step n + 1. */
function schedule(prefix: string, perSecond: number): Transition[] {
  return Array.from({ length: TRANSITIONS }, (_, k) => ({
    task: `${prefix}-${String(k % TASKS).padStart(4, '0')}`,
    step: Math.floor(k / TASKS),
    releaseMs: perSecond > 0 ? (k / perSecond) * 1000 : 0,
  }));
}

interface WriteRun {
  written: Written[];
  start: number;
  end: number;
}

/** Writes the transitions with WRITERS writers; a task's steps stay in order. */
async function writeTransitions(transitions: readonly Transition[]): Promise<WriteRun> {
  const previous = new Map<string, Promise<unknown>>();
  const written: Written[] = [];
  const start = performance.now();
  await pool(transitions, WRITERS, async ({ task, step, releaseMs }) => {
    await sleepUntil(start + releaseMs);
    const before = previous.get(task);
    const mine = (async () => {
      await before;
      written.push(await writeTransition(task, step));
    })();
    previous.set(task, mine);
    await mine;
  });
  return { written, start, end: performance.now() };
}

// ---------------------------------------------------------------------------------------------
// Checking and summarizing what arrived.

interface Check {
  expected: number;
  arrivedOnce: number;
  duplicates: number;
  missing: number;
  unexpected: number;
  misrouted: number;
}

function check(expected: ReadonlyMap<string, { webhook: string }>, recorder: Recorder): Check {
  let arrivedOnce = 0;
  let duplicates = 0;
  let missing = 0;
  let misrouted = 0;
  for (const [id, { webhook }] of expected) {
    const list = recorder.arrivals.get(id) ?? [];
    if (list.length === 0) missing++;
    else if (list.length === 1) arrivedOnce++;
    else duplicates += list.length - 1;
    misrouted += list.filter((arrival) => arrival.webhook !== webhook).length;
  }
  const unexpected = [...recorder.arrivals.keys()].filter((id) => !expected.has(id)).length;
  return { expected: expected.size, arrivedOnce, duplicates, missing, unexpected, misrouted };
}

const checkLine = (c: Check, withoutId: number): string =>
  `${c.arrivedOnce}/${c.expected} arrived exactly once; duplicates ${c.duplicates}, missing ${c.missing}, ` +
  `unexpected ${c.unexpected}, at the wrong receiver ${c.misrouted}, without webhook-id ${withoutId}`;

const checkFailed = (c: Check, withoutId: number): boolean =>
  c.arrivedOnce !== c.expected || c.duplicates + c.missing + c.unexpected + c.misrouted + withoutId > 0;

/** Delivery i: when its transition was written (or released, for the floor) and when it arrived. */
interface Timed {
  id: string;
  webhook: string;
  sent: number;
  arrived: number;
}

interface DeliveryRun {
  label: string;
  timed: Timed[];
  /** First write (or release) → last arrival. */
  spanMs: number;
  latency: Summary;
  check: Check;
  withoutId: number;
}

function deliveryRun(
  label: string,
  sent: ReadonlyMap<string, { webhook: string; at: number }>,
  recorder: Recorder,
  start: number,
): DeliveryRun {
  const timed: Timed[] = [];
  for (const [id, { webhook, at }] of sent) {
    const first = recorder.arrivals.get(id)?.[0];
    if (first !== undefined) timed.push({ id, webhook, sent: at, arrived: first.at });
  }
  const last = Math.max(...timed.map((t) => t.arrived));
  return {
    label,
    timed,
    spanMs: last - start,
    latency: summarize(timed.map((t) => t.arrived - t.sent)),
    check: check(sent, recorder),
    withoutId: recorder.withoutId,
  };
}

function reportDelivery(run: DeliveryRun): void {
  console.log(
    `${run.label}: ${rate(run.timed.length, run.spanMs)} (${run.timed.length} in ${ms(run.spanMs)}); ` +
      `latency ${latencyLine(run.latency)}`,
  );
  console.log(`  ${checkLine(run.check, run.withoutId)}`);
}

/** Latency by tenth of the run (in arrival order): shows a backlog building or a stall. */
function perTenth(run: DeliveryRun): string {
  const ordered = [...run.timed].sort((a, b) => a.sent - b.sent);
  const size = Math.ceil(ordered.length / 10);
  const tenths: string[] = [];
  for (let i = 0; i < ordered.length; i += size) {
    const slice = ordered.slice(i, i + size).map((t) => t.arrived - t.sent);
    const s = summarize(slice);
    tenths.push(`${s.p50.toFixed(0)}/${s.max.toFixed(0)}`);
  }
  return tenths.join(' ');
}

/** Deliveries that took at least 1 s: the controller looks again at a busy webhook after 1 s. */
const overOneSecond = (run: DeliveryRun): number =>
  run.timed.filter((t) => t.arrived - t.sent >= 1000).length;

function resetRecorders(): void {
  for (const receiver of env.receivers) receiver.recorder = new Recorder();
}

/** All receivers' recorders as one (each receiver's recorder is its own). */
function mergedRecorder(): Recorder {
  const merged = new Recorder();
  for (const receiver of env.receivers) {
    const r = receiver.recorder;
    merged.count += r.count;
    merged.withoutId += r.withoutId;
    for (const [id, list] of r.arrivals)
      merged.arrivals.set(id, [...(merged.arrivals.get(id) ?? []), ...list]);
    for (const [id, request] of r.requests) if (!merged.requests.has(id)) merged.requests.set(id, request);
  }
  return merged;
}

const arrivedCount = (): number => env.receivers.reduce((sum, r) => sum + r.recorder.arrivals.size, 0);

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
  await until(
    'every delivery to arrive',
    remaining(),
    () => arrivedCount() >= expected,
    () => `${arrivedCount()}/${expected} webhook-ids arrived`,
  );
  let pending = { tasks: 0, entries: 0 };
  await until(
    'every outbox to drain',
    remaining(),
    async () => {
      pending = await pendingOutbox(prefix);
      return pending.entries === 0;
    },
    () => `${pending.entries} entries left in ${pending.tasks} tasks`,
  );
  return performance.now();
}

interface Metrics {
  reconciles: Map<string, number>;
  outcomes: Map<string, number>;
  /** Seconds spent in reconciles, and their count, over all results. */
  seconds: number;
  count: number;
}

/** Sums of `metric`'s samples by the value of `label` (only samples named `sample`, when given). */
async function byLabel(
  registry: Registry,
  metric: string,
  label: string,
  sample?: string,
): Promise<Map<string, number>> {
  const sums = new Map<string, number>();
  const values = (await registry.getSingleMetric(metric)?.get())?.values ?? [];
  for (const value of values) {
    const key = value.labels[label];
    const name = 'metricName' in value ? value.metricName : undefined;
    if (typeof key !== 'string' || (sample !== undefined && name !== sample)) continue;
    sums.set(key, (sums.get(key) ?? 0) + value.value);
  }
  return sums;
}

async function readMetrics(): Promise<Metrics> {
  const registry = env.registry;
  if (registry === undefined) return { reconciles: new Map(), outcomes: new Map(), seconds: 0, count: 0 };
  const metric = 'agentry_reconcile_duration_seconds';
  const reconciles = await byLabel(registry, metric, 'result', `${metric}_count`);
  const sums = await byLabel(registry, metric, 'result', `${metric}_sum`);
  const total = (map: Map<string, number>): number => [...map.values()].reduce((a, b) => a + b, 0);
  return {
    reconciles,
    outcomes: await byLabel(registry, 'agentry_webhook_deliveries_total', 'outcome'),
    seconds: total(sums),
    count: total(reconciles),
  };
}

const diff = (after: Map<string, number>, before: Map<string, number>): string =>
  [...after]
    .map(([key, value]) => [key, value - (before.get(key) ?? 0)] as const)
    .filter(([, value]) => value !== 0)
    .map(([key, value]) => `${key} ${value}`)
    .join(', ') || 'none';

const EMPTY_METRICS: Metrics = { reconciles: new Map(), outcomes: new Map(), seconds: 0, count: 0 };

function reportController(before: Metrics, after: Metrics): void {
  const count = after.count - before.count;
  const mean = count === 0 ? Number.NaN : ((after.seconds - before.seconds) / count) * 1000;
  console.log(
    `  reconciles: ${diff(after.reconciles, before.reconciles)} (mean ${ms(mean)}); ` +
      `outcomes: ${diff(after.outcomes, before.outcomes)}; controller warnings: ${logs.take()}`,
  );
}

function reportStoreWrites(deliveries: number): void {
  const counting = env.counting;
  if (counting === undefined) return;
  const per = (kind: string): string =>
    `${kind} ${counting.writes.get(kind) ?? 0} (${((counting.writes.get(kind) ?? 0) / deliveries).toFixed(2)}/delivery, ` +
    `${counting.conflicts.get(kind) ?? 0} conflicts)`;
  console.log(`  the controller's status writes: ${per('Task')}, ${per('Webhook')}`);
}

// ---------------------------------------------------------------------------------------------
// Phases

interface Phase {
  run: DeliveryRun;
  writes: WriteRun;
  requests: Map<string, Captured>;
}

/** Transitions written while the controller runs (paced at `perSecond`, or as fast as they go). */
async function livePhase(label: string, prefix: string, perSecond: number): Promise<Phase> {
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
  const recorder = mergedRecorder();
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

/** POSTs one captured request to `url` on a new connection (or `agent`); resolves with the status. */
function post(url: URL, request: Captured, agent: Agent | false): Promise<number> {
  const pick = (name: string): string => String(request.headers[name] ?? '');
  const headers: OutgoingHttpHeaders = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(request.body),
    'user-agent': pick('user-agent'),
    'webhook-id': pick('webhook-id'),
    'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
    'webhook-signature': pick('webhook-signature'),
  };
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      method: 'POST',
      hostname: url.hostname,
      port: Number(url.port),
      path: url.pathname,
      headers,
      agent,
    });
    const timer = setTimeout(() => {
      req.destroy(new Error(`no answer within ${POST_TIMEOUT_MS} ms`));
    }, POST_TIMEOUT_MS);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => {
        clearTimeout(timer);
        resolve(res.statusCode ?? 0);
      });
    });
    req.end(request.body);
  });
}

interface Planned {
  id: string;
  webhook: string;
  releaseMs: number;
}

/**
 * The floor: `planned` requests POSTed straight to the receivers, `concurrency` in flight per webhook
 * (each webhook's in release order), each not before its release time.
 */
async function floor(
  label: string,
  planned: readonly Planned[],
  requests: ReadonlyMap<string, Captured>,
  concurrency: number,
  agent: Agent | false,
): Promise<DeliveryRun> {
  resetRecorders();
  const urls = new Map(env.receivers.map((r) => [r.webhook, new URL(r.url)]));
  const start = performance.now();
  const sent = new Map<string, { webhook: string; at: number }>();
  let failures = 0;
  await Promise.all(
    [...urls].map(([webhook, url]) => {
      const mine = planned.filter((p) => p.webhook === webhook).sort((a, b) => a.releaseMs - b.releaseMs);
      return pool(mine, concurrency, async ({ id, releaseMs }) => {
        const request = requests.get(id);
        if (request === undefined) throw new Error(`no captured request for ${id}`);
        sent.set(id, { webhook, at: start + releaseMs });
        await sleepUntil(start + releaseMs);
        const status = await post(url, request, agent);
        if (status !== 200) failures++;
      });
    }),
  );
  if (failures > 0) throw new Error(`${label}: ${failures} POSTs were not answered 200`);
  await sleep(50);
  return deliveryRun(label, sent, mergedRecorder(), start);
}

/** The measured run's deliveries, released at their transitions' offsets from its first write. */
function replayPlan(phase: Phase): Planned[] {
  const first = Math.min(...phase.run.timed.map((t) => t.sent));
  return phase.run.timed.map((t) => ({ id: t.id, webhook: t.webhook, releaseMs: t.sent - first }));
}

function reportAgainstFloor(name: string, run: DeliveryRun, base: DeliveryRun): void {
  const throughput = (r: DeliveryRun): number => r.timed.length / r.spanMs;
  console.log(
    `${name}: throughput ${ratio(throughput(run), throughput(base))} of the floor's, ` +
      `latency p50 ${ratio(run.latency.p50, base.latency.p50)} / p95 ${ratio(run.latency.p95, base.latency.p95)} / ` +
      `p99 ${ratio(run.latency.p99, base.latency.p99)} the floor's`,
  );
}

/** Signing: µs per op of `sign`, after a warm-up. */
function timeSigning(sign: (i: number) => string): number {
  for (let i = 0; i < Math.min(1000, SIGNS); i++) sign(i);
  const start = process.hrtime.bigint();
  let bytes = 0;
  for (let i = 0; i < SIGNS; i++) bytes += sign(i).length;
  const perOp = Number(process.hrtime.bigint() - start) / 1e3 / SIGNS;
  if (bytes === 0) throw new Error('no signature');
  return perOp;
}

interface Signing {
  ed25519: number;
  rotation: number;
  hmac: number;
}

async function signingPhase(): Promise<Signing> {
  const store = storeOf();
  // A namespace of its own: the rotation must not change the keys the controller signs with.
  const keysNamespace = 'bench-signing';
  const keys = await WebhookSigningKeys.load(store, keysNamespace);
  const task: Task = {
    ...newTask('signing-sample'),
    metadata: {
      name: 'signing-sample',
      namespace: NS,
      creationTimestamp: new Date().toISOString(),
      uid: randomUUID(),
    },
    status: nextStatus(2, newTask('signing-sample'), new Date()),
  };
  const webhook: Webhook = {
    apiVersion: apiVersionOf(WebhookType),
    kind: 'Webhook',
    metadata: { name: 'wh', namespace: NS },
    spec: { url: PUBLIC_URL, events: ['task.completed'] },
  };
  const [entry] = outboxEntriesFor([webhook], ['task.completed'], new Date());
  if (entry === undefined) throw new Error('no outbox entry for the sample');
  const body = JSON.stringify(
    deliveryBody(task, entry, { publicUrl: PUBLIC_URL, shareUrl: (id) => `${PUBLIC_URL}/v1/share/${id}` }),
  );
  const id = entry.id;
  const ts = Math.floor(Date.now() / 1000);
  const secret = randomBytes(32);
  console.log(
    `signing: ${SIGNS} signatures of a ${Buffer.byteLength(body)}-byte task.completed body (after 1000 warm-up)`,
  );
  const hmac = timeSigning(() => createHmac('sha256', secret).update(`${id}.${ts}.${body}`).digest('base64'));
  console.log(`floor: HMAC-SHA256 (Standard Webhooks v1): ${hmac.toFixed(2)} µs/op`);
  const ed25519 = timeSigning(() => keys.sign(id, ts, body));
  console.log(`WebhookSigningKeys.sign, one key (v1a, Ed25519): ${ed25519.toFixed(2)} µs/op`);
  const rotated = await WebhookSigningKeys.rotate(store, keysNamespace, { windowMs: 3_600_000 });
  const pair = rotated.sign(id, ts, body);
  if (pair.split(' ').length !== 2)
    throw new Error(`a rotation signs with ${pair.split(' ').length} keys, not 2`);
  const rotation = timeSigning(() => rotated.sign(id, ts, body));
  console.log(`WebhookSigningKeys.sign, two keys (during a rotation): ${rotation.toFixed(2)} µs/op`);
  // What a receiver pays: checking one v1a signature with the published key.
  const document = keys.publicKeyDocument();
  const signature = Buffer.from(keys.sign(id, ts, body).slice(4), 'base64');
  const signed = Buffer.from(`${id}.${ts}.${body}`);
  const publicKey = createPublicKey(document.publicKeyPem);
  const verifyUs = timeSigning(() => (verify(null, signed, publicKey, signature) ? 'ok' : ''));
  console.log(`aside: a receiver verifying one v1a signature: ${verifyUs.toFixed(2)} µs/op`);
  return { ed25519, rotation, hmac };
}

/** What one status write costs the embedded store here, alone: the bound on every write below. */
async function storeWriteAside(count: number): Promise<Summary> {
  const store = storeOf();
  let task = await store.create(TaskType, newTask('store-probe'));
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    task = await store.replaceStatus(
      TaskType,
      { ...task, status: { status: 'running', observedGeneration: i + 1 } },
      { resourceVersion: task.metadata.resourceVersion },
    );
    samples.push(performance.now() - start);
  }
  await store.delete(TaskType, NS, 'store-probe');
  return summarize(samples);
}

/** The backlog: every transition written with no controller running, then one started. */
async function backlogPhase(prefix: string): Promise<DeliveryRun> {
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
  const run = deliveryRun('backlog', expected, mergedRecorder(), start);
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

/** Every webhook still active, with no failures recorded. */
async function reportWebhooks(): Promise<void> {
  const { items } = await storeOf().list(WebhookType, { namespace: NS });
  const states = items.map(
    (w) =>
      `${w.metadata.name} active=${String(w.status?.isActive ?? true)} failureCount=${w.status?.failureCount ?? 0}` +
      (w.status?.lastError === undefined ? '' : ` lastError=${JSON.stringify(w.status.lastError)}`),
  );
  console.log(`webhooks at the end: ${states.join('; ')}`);
}

/** A sample of deliveries checked against the published key with Node's crypto (not Agentry's code). */
async function verifySample(requests: ReadonlyMap<string, Captured>, count: number): Promise<string> {
  const keys = await WebhookSigningKeys.load(storeOf(), CONTROL);
  const key = createPublicKey(keys.publicKeyDocument().publicKeyPem);
  let good = 0;
  let checked = 0;
  for (const [id, { headers, body }] of requests) {
    if (checked >= count) break;
    checked++;
    const signature = String(headers['webhook-signature'] ?? '');
    const signed = Buffer.from(`${id}.${String(headers['webhook-timestamp'] ?? '')}.${body}`);
    const ok = signature
      .split(' ')
      .filter((part) => part.startsWith('v1a,'))
      .some((part) => verify(null, signed, key, Buffer.from(part.slice(4), 'base64')));
    if (ok) good++;
  }
  return `${good}/${checked}`;
}

// ---------------------------------------------------------------------------------------------
// Main

let failed = false;
try {
  console.log(
    `webhook delivery: ${TRANSITIONS} transitions (${TASKS} tasks × ≤${STEPS_PER_TASK}) × ${WEBHOOKS} webhooks = ` +
      `${DELIVERIES} deliveries per phase; ${WRITERS} transition writers; controller defaults ` +
      `(${DELIVERY_WORKERS} workers, ${PER_WEBHOOK_CONCURRENCY} in flight per webhook); ` +
      `${availableParallelism()} CPUs, node ${process.version}, load average ${load()}`,
  );
  progress('setting up');
  await setUp();

  progress('store writes');
  const writeCost = await storeWriteAside(300);
  console.log(
    `aside: one Task status write, sequential, on a quiet store: p50 ${ms(writeCost.p50)}, p99 ${ms(writeCost.p99)} ` +
      `(≈ ${(1000 / writeCost.p50).toFixed(0)} writes/s at most; the store serializes writes)`,
  );

  progress('signing');
  const signing = await signingPhase();

  progress('delivery, transitions as fast as they are written');
  const manager = await startDelivery();
  const fast = await livePhase('delivery, unpaced', 'fast', 0);
  const sizes = summarize([...fast.requests.values()].map((r) => Buffer.byteLength(r.body)));
  console.log(
    `  bodies: p50 ${sizes.p50} bytes, max ${sizes.max}; signatures verified with the published key: ` +
      `${await verifySample(fast.requests, 30)} sampled`,
  );
  progress('floor for the unpaced run');
  const fastFloor = await floor(
    `floor, same release times, ${PER_WEBHOOK_CONCURRENCY} per webhook, new connection each`,
    replayPlan(fast),
    fast.requests,
    PER_WEBHOOK_CONCURRENCY,
    false,
  );
  reportDelivery(fastFloor);

  let paced: Phase | undefined;
  let pacedFloor: DeliveryRun | undefined;
  if (RATE > 0) {
    progress(`delivery, paced at ${RATE} transitions/s`);
    paced = await livePhase(`delivery, paced at ${RATE} transitions/s`, 'paced', RATE);
    progress('floor for the paced run');
    pacedFloor = await floor(
      `floor, same release times, ${PER_WEBHOOK_CONCURRENCY} per webhook, new connection each`,
      replayPlan(paced),
      paced.requests,
      PER_WEBHOOK_CONCURRENCY,
      false,
    );
    reportDelivery(pacedFloor);
  }
  await manager.stop();

  progress('backlog');
  const backlog = await backlogPhase('backlog');

  progress('raw POST capacity');
  const burst = fast.run.timed.map((t) => ({ id: t.id, webhook: t.webhook, releaseMs: 0 }));
  const capacity: { label: string; run: DeliveryRun }[] = [];
  for (const concurrency of [1, PER_WEBHOOK_CONCURRENCY, 16]) {
    const label = `floor, all at once, ${concurrency} per webhook, new connection each`;
    capacity.push({ label, run: await floor(label, burst, fast.requests, concurrency, false) });
  }
  const keepAlive = new Agent({ keepAlive: true, maxSockets: PER_WEBHOOK_CONCURRENCY });
  try {
    const label = `floor, all at once, ${PER_WEBHOOK_CONCURRENCY} per webhook, keep-alive`;
    capacity.push({
      label,
      run: await floor(label, burst, fast.requests, PER_WEBHOOK_CONCURRENCY, keepAlive),
    });
  } finally {
    keepAlive.destroy();
  }
  for (const { label, run } of capacity)
    console.log(`${label}: ${rate(run.timed.length, run.spanMs)} (${run.timed.length} in ${ms(run.spanMs)})`);

  await reportWebhooks();
  console.log(`load average at the end: ${load()}`);

  const checks = [fast.run, fastFloor, paced?.run, pacedFloor, backlog].filter(
    (run): run is DeliveryRun => run !== undefined,
  );
  const bad = checks.filter((run) => checkFailed(run.check, run.withoutId));

  console.log('\nsummary');
  console.log(
    `signing, Ed25519 / HMAC-SHA256: ${ratio(signing.ed25519, signing.hmac)} ` +
      `(${signing.ed25519.toFixed(1)} vs ${signing.hmac.toFixed(1)} µs); two keys / one: ${ratio(signing.rotation, signing.ed25519)}`,
  );
  const perDelivery = (fast.run.spanMs * 1000) / fast.run.timed.length;
  console.log(
    `signing share of the unpaced run's time per delivery: ${((signing.ed25519 / perDelivery) * 100).toFixed(1)}% ` +
      `(${signing.ed25519.toFixed(0)} µs of ${perDelivery.toFixed(0)} µs)`,
  );
  reportAgainstFloor('unpaced delivery / floor', fast.run, fastFloor);
  if (paced !== undefined && pacedFloor !== undefined)
    reportAgainstFloor('paced delivery / floor', paced.run, pacedFloor);
  const atFour = capacity[1]?.run;
  if (atFour !== undefined)
    console.log(
      `backlog drain / raw POST capacity at ${PER_WEBHOOK_CONCURRENCY} per webhook: ` +
        ratio(backlog.timed.length / backlog.spanMs, atFour.timed.length / atFour.spanMs),
    );
  console.log(
    bad.length === 0
      ? 'every delivery arrived exactly once in every phase; every outbox drained'
      : `PROBLEMS: ${bad.map((run) => `${run.label}: ${checkLine(run.check, run.withoutId)}`).join('; ')}`,
  );
  if (bad.length > 0) failed = true;
} catch (err) {
  failed = true;
  console.error('\nbenchmark failed:', err);
} finally {
  await tearDown();
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
}
process.exitCode = failed ? 1 : 0;
