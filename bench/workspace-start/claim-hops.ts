// Where a real-node claim's time goes, read from the Pod logs a run kept (BENCH_REAL_NODE_LOGS, with
// BENCH_LOG_LEVEL=debug): the API server's POST, the operator's dispatch and the runner's own
// request log, on the kubelet's timestamps (one machine, one clock).
//
//   node --import ./test/support/register-swc.mjs bench/workspace-start/claim-hops.ts <logs dir>
//
// Tasks on the Pod that ran the most of them are the running workspace's (the floor: back to back
// before the first claim, paired after it); every other workspace Pod is a claimed member.
import { readFile, readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { summarize } from '../support/stats.js';

/** The fields of our pino lines this reads; anything else in a line is ignored. */
const LineSchema = z.looseObject({
  msg: z.string().optional(),
  req: z.looseObject({ method: z.string().optional(), url: z.string().optional() }).optional(),
  res: z.looseObject({ statusCode: z.number().optional() }).optional(),
  responseTime: z.number().optional(),
  task: z.string().optional(),
  taskId: z.string().optional(),
  dispatchMs: z.number().optional(),
});
type Line = z.infer<typeof LineSchema>;

interface Logged {
  /** The kubelet's timestamp of the line (ms since the epoch, µs resolution). */
  at: number;
  pod: string;
  line: Line;
}

/** Every JSON line of every container log under `dir` (`<namespace>_<pod>_<uid>/<container>/N.log`). */
async function readLogs(dir: string): Promise<Logged[]> {
  const files = (await readdir(dir, { recursive: true })).filter((file) => file.endsWith('.log'));
  const logged: Logged[] = [];
  for (const file of files) {
    const pod = basename(dirname(dirname(join(dir, file))));
    let partial = '';
    for (const raw of (await readFile(join(dir, file), 'utf8')).split('\n')) {
      // CRI format: `<RFC 3339 time> <stream> <P|F> <text>`; P lines continue on the next one.
      const [time, , tag, ...rest] = raw.split(' ');
      if (time === undefined || tag === undefined) continue;
      partial += rest.join(' ');
      if (tag === 'P') continue;
      const text = partial;
      partial = '';
      const parsed = LineSchema.safeParse(safeJson(text));
      if (parsed.success) logged.push({ at: Date.parse(time) + microseconds(time), pod, line: parsed.data });
    }
  }
  return logged.sort((a, b) => a.at - b.at);
}

const safeJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** Date.parse keeps milliseconds only: the next three digits of the fraction, as a fraction of a ms. */
const microseconds = (time: string): number => Number(`0.${/\.\d{3}(\d{0,3})/.exec(time)?.[1] ?? '0'}`);

const TASK_PATH = /^\/v1\/tasks\/([^/?]+)\/prompts\//;

interface Hops {
  kind: 'back-to-back floor' | 'paired floor' | 'claim';
  postAnswered: number;
  answeredToDispatch: number;
  dispatch: number;
  runnerPut: number;
  promptStarted: number;
}

const isTaskPost = ({ pod, line }: Logged): boolean =>
  pod.includes('agentry-api') &&
  line.msg === 'request completed' &&
  line.req?.method === 'POST' &&
  line.req.url === '/v1/tasks' &&
  line.res?.statusCode === 201;

/** What the runners logged of each task: the Pod, the dispatch PUT, when its prompt started. */
interface RunnerSide {
  pod: Map<string, string>;
  put: Map<string, { start: number; end: number }>;
  started: Map<string, number>;
}

function runnerSide(logs: Logged[]): RunnerSide {
  const side: RunnerSide = { pod: new Map(), put: new Map(), started: new Map() };
  for (const { at, pod, line } of logs) {
    const task = line.req?.method === 'PUT' ? TASK_PATH.exec(line.req.url ?? '')?.[1] : undefined;
    if (task !== undefined && task !== 'warm-up' && line.msg === 'request completed') {
      side.pod.set(task, pod);
      side.put.set(task, { start: at - (line.responseTime ?? 0), end: at });
    }
    if (line.msg === 'prompt started' && line.taskId !== undefined) side.started.set(line.taskId, at);
  }
  return side;
}

/** The Pod that ran the most tasks: the running workspace's. */
function floorPodOf(side: RunnerSide): string | undefined {
  const perPod = new Map<string, number>();
  for (const pod of side.pod.values()) perPod.set(pod, (perPod.get(pod) ?? 0) + 1);
  return [...perPod.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
}

const startOf = (logged: Logged): number => logged.at - (logged.line.responseTime ?? 0);

/** Each dispatched task's hops, measured from the start of the POST that made it. */
function hopsOf(logs: Logged[]): Hops[] {
  const posts = logs.filter(isTaskPost);
  const side = runnerSide(logs);
  const floorPod = floorPodOf(side);
  const dispatches = logs.filter(({ line }) => line.msg === 'dispatched a prompt' && line.task !== undefined);
  const onFloor = (task: string): boolean => side.pod.get(task) === floorPod;
  const firstClaim = dispatches.find(({ line }) => !onFloor(line.task ?? ''))?.at ?? Infinity;
  const hops: Hops[] = [];
  for (const { at, line } of dispatches) {
    const task = line.task ?? '';
    const dispatchStart = at - (line.dispatchMs ?? 0);
    // The POST that made it: the last to start before its dispatch (the bench runs one task at a time).
    const post = posts.filter((p) => startOf(p) <= dispatchStart).at(-1);
    const put = side.put.get(task);
    const prompt = side.started.get(task);
    if (post === undefined || put === undefined || prompt === undefined) continue;
    hops.push({
      kind: !onFloor(task) ? 'claim' : dispatchStart < firstClaim ? 'back-to-back floor' : 'paired floor',
      postAnswered: post.at - startOf(post),
      answeredToDispatch: dispatchStart - post.at,
      dispatch: at - dispatchStart,
      runnerPut: put.end - put.start,
      promptStarted: prompt - startOf(post),
    });
  }
  return hops;
}

const STRETCHES: [keyof Omit<Hops, 'kind'>, string][] = [
  ['postAnswered', "POST answered (the API server's responseTime)"],
  ['answeredToDispatch', 'POST answered → the operator begins its dispatch'],
  ['dispatch', 'the dispatch PUT (operator)'],
  ['runnerPut', 'the dispatch PUT (runner)'],
  ['promptStarted', "POST → the runner's `prompt started`"],
];

const ms = (value: number): string => `${value.toFixed(1)} ms`;

async function main(): Promise<void> {
  const dir = process.argv[2];
  if (dir === undefined)
    throw new Error('usage: claim-hops.ts <the BENCH_REAL_NODE_LOGS directory of a run>');
  const hops = hopsOf(await readLogs(dir));
  const kinds = ['back-to-back floor', 'paired floor', 'claim'] as const;
  console.log(
    `| median | ${kinds.map((kind) => `${kind} (n = ${hops.filter((h) => h.kind === kind).length})`).join(' | ')} |`,
  );
  console.log(`| --- | ${kinds.map(() => '---').join(' | ')} |`);
  for (const [key, label] of STRETCHES) {
    const cells = kinds.map((kind) => {
      const values = hops.filter((h) => h.kind === kind).map((h) => h[key]);
      return values.length === 0 ? '–' : ms(summarize(values).p50);
    });
    console.log(`| ${label} | ${cells.join(' | ')} |`);
  }
}

await main();
