// CPU per request of the API's hottest reads, GET /v1/tasks/:id and GET /v1/tasks?limit=20, against
// a bare Express handler answering the same bytes (res.json of the same object), both on loopback in
// this process, measured alternately in one run. The load comes from a child process (load.ts:
// keep-alive, LOAD_CONCURRENCY in flight), so this process's CPU is the server's alone. The API runs
// as the embedded default does: real read model over an embedded store, the request log at info
// (its lines discarded here rather than written to stdout).
// Figures go to stdout (a Markdown table), progress to stderr.
//
// Run: npm run bench:api
// Env: BENCH_ROUNDS       alternations of baseline and API per endpoint (default 5)
//      BENCH_DURATION_MS  load per measurement (default 3000)
//      BENCH_CONCURRENCY  requests in flight (default 8)
import { createServer } from 'node:http';
import express from 'express';
import { loadAverage } from '../support/format.js';
import { closeServer, listenOnLoopback } from '../support/http.js';
import { progress, summarize } from '../support/stats.js';
import { startTestApi } from '../../test/support/api-server.js';
import { measureLoad } from './measure.js';
import type { LoadFigures } from './measure.js';
import { seedTasks } from './seed.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? '5');

interface Endpoint {
  label: string;
  path: string;
}

/** A bare Express app answering each endpoint's path with the object the API answered. */
async function startBaseline(
  answers: Map<string, unknown>,
): Promise<{ url: string; stop: () => Promise<void> }> {
  const app = express();
  for (const [path, body] of answers) {
    app.get(path.split('?')[0] ?? path, (_req, res) => {
      res.json(body);
    });
  }
  const server = createServer(app);
  const port = await listenOnLoopback(server);
  return { url: `http://127.0.0.1:${String(port)}`, stop: () => closeServer(server) };
}

const median = (runs: readonly LoadFigures[], pick: (f: LoadFigures) => number): number =>
  summarize(runs.map(pick)).p50;

/** ROUNDS of the baseline and the API on one endpoint, alternating which goes first; a table row of medians. */
async function alternate(
  label: string,
  [bareUrl, apiUrl]: [string, string],
  path: string,
  key: string,
): Promise<string> {
  const bare: LoadFigures[] = [];
  const full: LoadFigures[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    progress(`${label}: round ${String(round + 1)}/${String(ROUNDS)}`);
    // Alternate which goes first, so a drift in background load hits both alike.
    const order = round % 2 === 0 ? [true, false] : [false, true];
    for (const isBare of order)
      (isBare ? bare : full).push(await measureLoad(`${isBare ? bareUrl : apiUrl}${path}`, key));
  }
  const cpu = (runs: LoadFigures[]): number => median(runs, (f) => f.cpuUsPerRequest);
  const rate = (runs: LoadFigures[]): number => median(runs, (f) => f.requestsPerSecond);
  const p99 = (runs: LoadFigures[]): number => median(runs, (f) => f.p99Ms);
  return [
    `| ${label}`,
    `${cpu(full).toFixed(0)} µs`,
    `${cpu(bare).toFixed(0)} µs`,
    `${(cpu(full) / cpu(bare)).toFixed(2)}×`,
    `${rate(full).toFixed(0)}/s`,
    `${rate(bare).toFixed(0)}/s`,
    `${p99(full).toFixed(1)} ms / ${p99(bare).toFixed(1)} ms |`,
  ].join(' | ');
}

async function main(): Promise<void> {
  progress(`load average ${loadAverage()}`);
  const api = await startTestApi({ logDestination: { write: () => undefined }, logLevel: 'info' });
  const { key, taskId } = await seedTasks(api);
  const endpoints: Endpoint[] = [
    { label: 'GET /v1/tasks/:id', path: `/v1/tasks/${taskId}` },
    { label: 'GET /v1/tasks?limit=20', path: '/v1/tasks?limit=20' },
  ];
  const answers = new Map<string, unknown>();
  for (const { path } of endpoints) {
    const res = await fetch(`${api.url}${path}`, { headers: { API_KEY: key } });
    if (res.status !== 200) throw new Error(`${path} answered ${String(res.status)}`);
    answers.set(path, await res.json());
  }
  const baseline = await startBaseline(answers);
  const rows: string[] = [];
  try {
    for (const { label, path } of endpoints)
      rows.push(await alternate(label, [baseline.url, api.url], path, key));
  } finally {
    await baseline.stop();
    await api.stop();
  }
  console.log(
    '| endpoint | API CPU/request | bare Express CPU/request | ratio | API req/s | bare req/s | p99 API / bare |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const row of rows) console.log(row);
  progress(`load average ${loadAverage()}`);
}

await main();
