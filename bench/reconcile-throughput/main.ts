// Reconcile throughput against a real kube-apiserver (the KWOK cluster of test/cluster/harness):
// - baseline: N PVC + Pod pairs created directly with @kubernetes/client-node, timed from the first
//   create until every Pod is Ready;
// - measured: N AgentComputers (pod runtime) created with the Kubernetes store while the operator runs
//   in this process, timed from the first create until every one is `ready` (agentComputerStatus).
// Both run in the same process and cluster, in namespaces of their own, each disk backed by a
// PersistentVolume made beforehand and pre-bound to its claim (the cluster has no provisioner). The
// benchmark adds fake nodes for 2·N pods and a second service range (the default one holds 253).
// Each run starts a cluster of its own (startCluster) and deletes it at the end.
//
// Run: npm run bench:reconcile (node --expose-gc … bench/reconcile-throughput/main.ts)
// Env: BENCH_N               AgentComputers, and baseline Pods (default 500)
//      BENCH_WORKERS         agentComputerWorkers; a list (4,8,16) runs each in a fresh cluster and
//                            process and prints a summary (default 16, the operator's)
//      BENCH_KEEPALIVE       1: one keep-alive https.Agent per client, for the operator's store, the
//                            benchmark's store and client-node alike (default 0: as shipped, a new
//                            TLS connection per request)
//      BENCH_MAX_CONNECTIONS the operator's store's connection pool (default: the store's, 32)
//      BENCH_CONCURRENCY     creates in flight, on both sides (default 16)
//      BENCH_ORDER           baseline-first (default) or measured-first
//      BENCH_STALL_MS        fail when no more become ready for this long (default 120000)
//      BENCH_STORE           kwok (default) or embedded: no cluster, the agentcomputer controller
//                            alone over the embedded store, a cold pass (embedded.ts)
//      BENCH_TASKS           embedded only: Tasks spread over the AgentComputers (default BENCH_N)
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { KubernetesStore } from '../../platform/store/kubernetes.js';
import { startCluster } from '../../test/cluster/harness/cluster.js';
import { spawnLines } from '../support/child.js';
import { AGENT_COMPUTER_WORKERS } from '../../operator/agent-computer/controller.js';
import { runBaseline } from './baseline.js';
import { addNodes, addServiceRange } from './cluster-setup.js';
import { KEEPALIVE, N, ORDER, STORE, WORKERS } from './config.js';
import { runEmbedded } from './embedded.js';
import { BenchKubeConfig } from './kube-config.js';
import { runMeasured } from './measured.js';
import type { MeasuredResult } from './measured.js';
import { describePhase, seconds } from './phase.js';
import type { PhaseResult } from './phase.js';

interface RunResult {
  n: number;
  keepAlive: boolean;
  order: string;
  baseline: PhaseResult;
  measured: MeasuredResult;
  ratio: number;
}

/** What the summary table reads of a child run's RunResult line. */
const RunSummarySchema = z.object({
  n: z.number(),
  baseline: z.object({ totalMs: z.number() }),
  measured: z.object({
    workers: z.number(),
    totalMs: z.number(),
    operatorRequests: z.number(),
    reconciles: z.record(z.string(), z.number()),
    memory: z.object({ peakRssMiB: z.number() }),
  }),
  ratio: z.number(),
});

async function runOnce(workers: number): Promise<RunResult> {
  const cluster = await startCluster();
  const interrupted = (): void => {
    void cluster.stop().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
  try {
    const admin = KubernetesStore.fromKubeConfig(new BenchKubeConfig(cluster.kubeconfig, false));
    await addNodes(admin, 2 * N);
    await addServiceRange(admin);
    const tag = Date.now().toString(36);
    let baseline: PhaseResult | undefined;
    let measured: MeasuredResult | undefined;
    const phases = [
      async () => {
        baseline = await runBaseline(admin, cluster.kubeconfig, `bench-pods-${tag}`);
        describePhase(`baseline (${N} PVC + Pod, client-node)`, baseline);
      },
      async () => {
        measured = await runMeasured(admin, cluster.kubeconfig, `bench-acs-${tag}`, workers);
        describePhase(`measured (${N} AgentComputers, ${workers} workers)`, measured);
      },
    ];
    if (ORDER === 'measured-first') phases.reverse();
    for (const phase of phases) await phase();
    if (baseline === undefined || measured === undefined) throw new Error('a phase did not run');
    const ratio = measured.totalMs / baseline.totalMs;
    console.log(`ratio measured/baseline: ${ratio.toFixed(2)}x (goal ≤ 1.5x)`);
    console.log(
      `operator requests: ${measured.operatorRequests} (${(measured.operatorRequests / N).toFixed(1)} per AgentComputer)`,
    );
    console.log(
      `reconciles: ${JSON.stringify(measured.reconciles)}, seconds: ${JSON.stringify(measured.reconcileSeconds)}, errors: ${measured.reconcileErrors}`,
    );
    console.log(`memory (MiB): ${JSON.stringify(measured.memory)}`);
    return { n: N, keepAlive: KEEPALIVE, order: ORDER, baseline, measured, ratio };
  } finally {
    await cluster.stop();
  }
}

const RESULT_PREFIX = 'BENCH_RESULT ';

/** One worker count in a child process of its own (this file again), its output passed through. */
async function runChild(workers: number): Promise<z.infer<typeof RunSummarySchema> | undefined> {
  let result: string | undefined;
  await spawnLines(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url)],
    (line) => {
      console.log(line);
      if (line.startsWith(RESULT_PREFIX)) result = line.slice(RESULT_PREFIX.length);
      return undefined;
    },
    { env: { ...process.env, BENCH_WORKERS: String(workers) } },
  ).catch((err: unknown) => {
    throw new Error(`the run with ${workers} workers failed`, { cause: err });
  });
  return result === undefined ? undefined : RunSummarySchema.parse(JSON.parse(result));
}

/** Several worker counts: each in a child process and cluster of its own, so memory is not shared. */
async function runEach(workerCounts: number[]): Promise<void> {
  const results: z.infer<typeof RunSummarySchema>[] = [];
  for (const workers of workerCounts) {
    console.log(`\n=== ${workers} workers ===`);
    const result = await runChild(workers);
    if (result !== undefined) results.push(result);
  }
  console.log('\nworkers | baseline s | measured s | ratio | operator req/AC | reconciles | peak RSS MiB');
  for (const r of results) {
    const m = r.measured;
    const reconciles = Object.values(m.reconciles).reduce((a, b) => a + b, 0);
    console.log(
      `${m.workers} | ${seconds(r.baseline.totalMs)} | ${seconds(m.totalMs)} | ${r.ratio.toFixed(2)} | ` +
        `${(m.operatorRequests / r.n).toFixed(1)} | ${reconciles} | ${m.memory.peakRssMiB}`,
    );
  }
}

if (STORE === 'embedded') {
  for (const workers of WORKERS) await runEmbedded(workers);
} else if (WORKERS.length > 1) {
  await runEach(WORKERS);
} else {
  const result = await runOnce(WORKERS[0] ?? AGENT_COMPUTER_WORKERS);
  console.log(`${RESULT_PREFIX}${JSON.stringify(result)}`);
}
