// Throughput of `agentry api` with AGENTRY_API_WORKERS 1, 2 and auto, on one KWOK cluster (a real
// kube-apiserver: test/cluster/harness) in one run. The API runs as shipped (dist/, built first as
// `npm start` does), logging every request at info to a file; it serves GET /v1/tasks/:id of a
// seeded organization from its informer caches. autocannon loads it from a child process on
// loopback, bounded by BENCH_CONNECTIONS and BENCH_DURATION_S, after a warm-up. Rounds rotate which
// setting goes first. CPU per request is the user + system time of the whole process tree (primary
// and workers) over the load, from /proc, divided by the requests answered.
// Figures go to stdout (a Markdown table), progress to stderr.
//
// Run: npm run bench:api-workers
// Env: BENCH_ROUNDS       rounds of every setting (default 3)
//      BENCH_WORKERS      the settings, comma separated (default 1,2,auto)
//      BENCH_DURATION_S   load per measurement, seconds (default 10)
//      BENCH_WARMUP_S     load before each measurement, not counted (default 3)
//      BENCH_CONNECTIONS  autocannon's connections (default 32)
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort } from '../../test/support/free-port.js';
import { seedOrganizationTask } from '../../test/support/seed-organization.js';
import { buildAgentry } from '../peer-start/agentry-phase.js';
import { envCount } from '../support/env.js';
import { loadAverage } from '../support/format.js';
import { startBenchCluster } from '../support/bench-cluster.js';
import { progress } from '../support/stats.js';
import { startBuiltApi } from './api-tree.js';
import { autocannon } from './load.js';
import { printReport } from './report.js';
import type { Measurement } from './report.js';

const ROUNDS = envCount('BENCH_ROUNDS', 3);
const SETTINGS = (process.env.BENCH_WORKERS ?? '1,2,auto').split(',').map((each) => each.trim());
const SECONDS = envCount('BENCH_DURATION_S', 10);
const WARMUP_SECONDS = envCount('BENCH_WARMUP_S', 3, 0);
const CONNECTIONS = envCount('BENCH_CONNECTIONS', 32);
const CONTROL_NAMESPACE = 'agentry-system';

/** One setting: start it, warm it up, load it while reading its CPU, stop it. */
async function measure(
  setting: string,
  target: { kubeconfig: string; key: string; taskId: string; logDir: string },
): Promise<Measurement> {
  const port = await freeLoopbackPort();
  const api = await startBuiltApi({
    kubeconfig: target.kubeconfig,
    controlNamespace: CONTROL_NAMESPACE,
    port,
    workers: setting,
    logFile: join(target.logDir, `api-${setting}-${Date.now().toString(36)}.log`),
  });
  try {
    const load = {
      url: `http://127.0.0.1:${String(port)}/v1/tasks/${target.taskId}`,
      headers: { API_KEY: target.key },
      connections: CONNECTIONS,
    };
    if (WARMUP_SECONDS > 0) await autocannon({ ...load, seconds: WARMUP_SECONDS });
    const cpuBefore = await api.cpuSeconds();
    const result = await autocannon({ ...load, seconds: SECONDS });
    const cpu = (await api.cpuSeconds()) - cpuBefore;
    if (result.failures > 0)
      throw new Error(`${String(result.failures)} requests failed with ${setting} workers`);
    const measurement = {
      setting,
      workers: api.workers,
      requestsPerSecond: result.requests / result.seconds,
      p50Ms: result.p50Ms,
      p99Ms: result.p99Ms,
      cpuUsPerRequest: (cpu * 1e6) / result.requests,
      cpusUsed: cpu / result.seconds,
    };
    progress(
      `${setting} (${String(api.workers)}): ${measurement.requestsPerSecond.toFixed(0)}/s, p99 ${String(result.p99Ms)} ms, ${measurement.cpuUsPerRequest.toFixed(0)} µs/request, ${measurement.cpusUsed.toFixed(2)} CPUs`,
    );
    return measurement;
  } finally {
    const stopping = Date.now();
    await api.stop();
    progress(`${setting}: drained and stopped in ${String(Date.now() - stopping)} ms`);
  }
}

const loadBefore = loadAverage();
progress(`load average ${loadBefore}`);
progress('building Agentry (tsc, as npm start does)');
await buildAgentry();
const { cluster, admin } = await startBenchCluster();
const logDir = await mkdtemp(join(tmpdir(), 'agentry-bench-workers-'));
try {
  const seeded = await seedOrganizationTask(admin, {
    controlNamespace: CONTROL_NAMESPACE,
    organization: `bench-${randomBytes(3).toString('hex')}`,
  });
  const target = { kubeconfig: cluster.kubeconfig, ...seeded, logDir };
  const rounds: Measurement[][] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const order = [...SETTINGS.slice(r % SETTINGS.length), ...SETTINGS.slice(0, r % SETTINGS.length)];
    const round: Measurement[] = [];
    for (const setting of order) {
      progress(`round ${String(r + 1)}/${String(ROUNDS)}: ${setting} workers`);
      round.push(await measure(setting, target));
    }
    rounds.push(round);
  }
  printReport(rounds, SETTINGS, { connections: CONNECTIONS, seconds: SECONDS, loadBefore });
} finally {
  await admin.close();
  await cluster.stop();
  await rm(logDir, { recursive: true, force: true });
}
