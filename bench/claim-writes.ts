// What the writes of a warm-pool claim with its task cost a kube-apiserver (KWOK cluster, real etcd),
// as ratios against one Task create in the same run: POST /v1/tasks without workspaceId replaces the
// member (the claim) and creates the Task at once (api/workspace-pool/claim.ts), over one HTTP/2
// connection as `agentry api` sends them. Each round runs the four shapes back to back on a quiet
// cluster; the medians say whether two writes sent together overlap or queue behind each other.
//
//   npm run bench:claim-writes        (BENCH_ROUNDS, default 60; the first 10 warm up)
import { randomUUID } from 'node:crypto';
import { AgentComputerType, NamespaceType, TaskType } from '../crds/index.js';
import type { AgentComputer } from '../crds/index.js';
import { KubernetesStore } from '../platform/store/kubernetes.js';
import { readyStatus } from '../test/support/ready-status.js';
import { agentComputerObject, taskObject } from '../test/support/workspace-objects.js';
import { BenchKubeConfig } from './reconcile-throughput/kube-config.js';
import { startBenchCluster } from './support/bench-cluster.js';
import { envCount } from './support/env.js';
import { loadAverage, ms, ratio } from './support/format.js';
import { progress, summarize } from './support/stats.js';

const ROUNDS = envCount('BENCH_ROUNDS', 60, 11);
const WARMUP = 10;
const NAMESPACE = 'agentry-org-claim-writes';
const MEMBER = 'member';

type Shape = 'one create' | 'one replace' | 'replace and create at once' | 'two creates at once';

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

async function main(): Promise<void> {
  const { cluster, admin } = await startBenchCluster();
  // The API server's own client: HTTP/2, one connection.
  const store = KubernetesStore.fromKubeConfig(new BenchKubeConfig(cluster.kubeconfig, false), {
    http2: true,
  });
  try {
    await admin.create(NamespaceType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    const created = await store.create(AgentComputerType, agentComputerObject(NAMESPACE, MEMBER));
    let member: AgentComputer = await store.replaceStatus(AgentComputerType, {
      ...created,
      status: readyStatus(created, 'http://10.0.0.1:8080'),
    });
    const touched = (mark: string): AgentComputer => ({
      ...member,
      metadata: { ...member.metadata, annotations: { ...member.metadata.annotations, 'bench/mark': mark } },
    });
    const task = () => store.create(TaskType, taskObject(NAMESPACE, randomUUID(), MEMBER));
    const times = new Map<Shape, number[]>();
    const record = (shape: Shape, value: number): void => {
      times.set(shape, [...(times.get(shape) ?? []), value]);
    };
    progress(`${ROUNDS} rounds of the four shapes`);
    for (let round = 0; round < ROUNDS; round++) {
      const keep = round >= WARMUP;
      const create = await timed(task);
      const replace = await timed(async () => {
        member = await store.replace(AgentComputerType, touched(`a${round}`));
      });
      const together = await timed(async () => {
        [member] = await Promise.all([store.replace(AgentComputerType, touched(`b${round}`)), task()]);
      });
      const twoCreates = await timed(() => Promise.all([task(), task()]));
      if (!keep) continue;
      record('one create', create);
      record('one replace', replace);
      record('replace and create at once', together);
      record('two creates at once', twoCreates);
    }
    const floor = summarize(times.get('one create') ?? []).p50;
    console.log(
      `\n### Claim writes on a KWOK kube-apiserver (HTTP/2, one connection; load average ${loadAverage()})\n`,
    );
    console.log('| writes | n | p50 | p95 | p50 / one create |');
    console.log('| --- | --- | --- | --- | --- |');
    for (const [shape, values] of times) {
      const summary = summarize(values);
      console.log(
        `| ${shape} | ${summary.n} | ${ms(summary.p50)} | ${ms(summary.p95)} | ${ratio(summary.p50, floor)} |`,
      );
    }
  } finally {
    await store.close();
    await admin.close();
    await cluster.stop();
  }
}

await main();
