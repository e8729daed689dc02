// List endpoints as organizations grow: GET /v1/tasks?limit=1 at 10, 1,000 and 10,000 tasks per
// organization, over real HTTP on loopback against the real API app and read model (embedded store),
// with tasks put into the read model directly (as its watch would; 10,000 fsynced writes would only
// time the store). Against baselines in the same run:
// - HTTP: GET /v1/tasks/:id (one cached task, the same auth and JSON path) at the same size;
// - in process: one page from the index (what the route does) against the old way — every task of
//   the organization filtered and sorted newest first, then sliced — on the same read model.
// Figures go to stdout, progress to stderr.
//
// Run: npm run bench:lists
// Env: BENCH_SIZES     comma-separated organization sizes (default 10,1000,10000)
//      BENCH_REQUESTS  sequential HTTP requests per measurement (default 2000)
import { randomUUID } from 'node:crypto';
import { TaskType, apiVersionOf } from '../crds/index.js';
import type { Task } from '../crds/index.js';
import { newestTaskFirst } from '../platform/task-record.js';
import { visibleTo } from '../api/task/access.js';
import { taskListBuckets } from '../api/task/list-index.js';
import { startTestApi } from '../test/support/api-server.js';
import type { TestApi } from '../test/support/api-server.js';
import { loadAverage as load } from './support/format.js';
import { progress, summarize } from './support/stats.js';

const SIZES = (process.env.BENCH_SIZES ?? '10,1000,10000').split(',').map(Number);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? '2000');

function syntheticTask(namespace: string, index: number, base: number): Task {
  const submittedAt = new Date(base + index * 7).toISOString();
  return {
    apiVersion: apiVersionOf(TaskType),
    kind: TaskType.kind,
    metadata: { name: randomUUID(), namespace, creationTimestamp: submittedAt.replace(/\.\d+Z$/, 'Z') },
    spec: {
      workspace: randomUUID(),
      executor: 'shell',
      title: `task ${index}`,
      owner: index % 5 === 0 ? 'bob' : 'alice',
      visibility: index % 5 === 0 ? 'private' : 'shared',
      prompts: [{ id: randomUUID(), text: `echo ${index}`, submittedAt }],
    },
  };
}

/** Mean milliseconds per sequential request. */
async function timeRequests(url: string, key: string): Promise<number> {
  for (let i = 0; i < 50; i++) await (await fetch(url, { headers: { API_KEY: key } })).arrayBuffer();
  const started = performance.now();
  for (let i = 0; i < REQUESTS; i++) {
    const res = await fetch(url, { headers: { API_KEY: key } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  }
  return (performance.now() - started) / REQUESTS;
}

/** Median microseconds of `run` over enough rounds to last ~0.5 s. */
function timeInProcess(run: () => unknown): number {
  const samples: number[] = [];
  const until = performance.now() + 500;
  while (performance.now() < until || samples.length < 20) {
    const started = performance.now();
    run();
    samples.push((performance.now() - started) * 1000);
  }
  return summarize(samples).p50;
}

async function measure(api: TestApi, size: number, label = 'bench'): Promise<string> {
  const org = `${label}-${size}`;
  const key = await api.key({ org, user: 'alice' });
  const namespace = `agentry-org-${org}`;
  const base = Date.parse('2026-01-01T00:00:00Z');
  const tasks = Array.from({ length: size }, (_v, i) => syntheticTask(namespace, i, base));
  for (const task of tasks) api.readModel.observeTask(task);
  const principal = { namespace, user: 'alice' };
  const newest = tasks.at(-1)?.metadata.name ?? '';

  const oldWay = (): string[] =>
    api.readModel.tasks
      .list(namespace)
      .filter((task) => visibleTo(task, principal))
      .sort(newestTaskFirst)
      .slice(0, 1)
      .map((task) => task.metadata.name);
  const indexed = (): string[] => api.readModel.tasks.index.page(taskListBuckets(principal, {}), 0, 1);
  if (oldWay()[0] !== indexed()[0] || indexed()[0] !== newest)
    throw new Error('the index and the old way disagree on the newest task');
  const oldUs = timeInProcess(oldWay);
  const indexUs = timeInProcess(indexed);

  progress(`${size} tasks: HTTP`);
  const listMs = await timeRequests(`${api.url}/v1/tasks?limit=1`, key);
  const getMs = await timeRequests(`${api.url}/v1/tasks/${newest}`, key);
  return [
    `| ${size.toLocaleString('en')}`,
    `${(1000 / listMs).toFixed(0)}/s (${listMs.toFixed(2)} ms)`,
    `${(1000 / getMs).toFixed(0)}/s (${getMs.toFixed(2)} ms)`,
    (listMs / getMs).toFixed(2),
    `${indexUs.toFixed(1)} µs`,
    `${oldUs.toFixed(1)} µs`,
    `${(oldUs / indexUs).toFixed(1)}× |`,
  ].join(' | ');
}

async function main(): Promise<void> {
  progress(`load average ${load()}`);
  const api = await startTestApi();
  try {
    progress('warming up (not counted)');
    await measure(api, 10, 'warmup');
    const rows: string[] = [];
    for (const size of SIZES) rows.push(await measure(api, size));
    console.log(
      '| tasks in the org | GET /v1/tasks?limit=1 | baseline GET /v1/tasks/:id | list / get | one page, index | one page, filter + sort (old) | old / index |',
    );
    console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
    for (const row of rows) console.log(row);
  } finally {
    await api.stop();
  }
  progress(`load average ${load()}`);
}

await main();
