// Start latency on the real node (a kubelet with containerd on this machine, Agentry installed with
// helm from our own images; see test/realnode/harness), each figure against a baseline in the same run:
// - POST /v1/tasks → the task's first `init` event on its stream, through the API server's Service,
//   on a new workspace (Pod + PVC + runner start + dispatch) and on an existing one;
// - baselines: a bare Pod of the same runner image created with the Kubernetes API until Ready (what
//   `kubectl run` does), and the same with a PVC of the same storage class (what a workspace needs);
// - image sizes, and the memory of an idle workspace Pod (RSS of its processes).
// Progress on stderr, figures on stdout.
//
// Run: npm run bench:real-node (as root: it runs a kubelet, containerd and iptables)
// Env: BENCH_N   tasks per phase and baseline Pods (default 5)
import { execFile as execFileCallback } from 'node:child_process';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { createParser } from 'eventsource-parser';
import { z } from 'zod';
import { PersistentVolumeClaimType, PodType } from '../operator/runtimes/kube-objects.js';
import type { Pod } from '../operator/runtimes/kube-objects.js';
import { KubernetesStore } from '../platform/store/kubernetes.js';
import { startRealNodeDeployment } from '../test/realnode/harness/deployment.js';
import type { RealNodeDeployment } from '../test/realnode/harness/deployment.js';
import { REAL_NODE_SELECTOR } from '../test/realnode/harness/install-agentry.js';
import { destroyRealNode } from '../test/realnode/harness/teardown.js';
import { loadAverage as load } from './support/format.js';
import { progress, summarize } from './support/stats.js';
import type { Summary } from './support/stats.js';

const execFile = promisify(execFileCallback);
const N = Number(process.env.BENCH_N ?? 5);
const BENCH_NAMESPACE = 'default';

type State = RealNodeDeployment['state'];

async function kubectl(state: State, args: string[]): Promise<string> {
  const { stdout } = await execFile('kubectl', ['--kubeconfig', state.kubeconfig, ...args], {
    env: { ...process.env, PATH: `${state.toolsPath}:${process.env.PATH ?? ''}` },
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

/** POST /v1/tasks, then the stream until its first `init` event: milliseconds. */
async function timeToInit(
  state: State,
  body: Record<string, unknown>,
): Promise<{ ms: number; workspaceId: string }> {
  const started = performance.now();
  const res = await fetch(`${state.apiUrl}/v1/tasks`, {
    method: 'POST',
    headers: { 'api-key': state.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ executor: 'shell', prompt: 'echo ready', ...body }),
  });
  const task = z.object({ id: z.string(), workspaceId: z.string() }).parse(await res.json());
  const stream = await fetch(`${state.apiUrl}/v1/tasks/${task.id}/events`, {
    headers: { 'api-key': state.apiKey, accept: 'text/event-stream' },
    signal: AbortSignal.timeout(300_000),
  });
  if (stream.body === null) throw new Error(`no event stream: ${stream.status}`);
  let initAt: number | undefined;
  const parser = createParser({
    onEvent(message) {
      if (initAt === undefined && message.data.includes('"eventType":"init"')) initAt = performance.now();
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of stream.body as AsyncIterable<Uint8Array>) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    if (initAt !== undefined) break;
  }
  if (initAt === undefined) throw new Error(`task ${task.id}: the stream ended without init`);
  return { ms: initAt - started, workspaceId: task.workspaceId };
}

const barePod = (name: string, image: string, claim?: string): Pod =>
  PodType.schema.parse({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: BENCH_NAMESPACE, labels: { app: 'bench-bare' } },
    spec: {
      nodeSelector: REAL_NODE_SELECTOR,
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'main',
          image,
          command: ['bash', '-c', 'echo ready; exec sleep infinity'],
          ...(claim === undefined ? {} : { volumeMounts: [{ name: 'disk', mountPath: '/code' }] }),
        },
      ],
      ...(claim === undefined
        ? {}
        : { volumes: [{ name: 'disk', persistentVolumeClaim: { claimName: claim } }] }),
    },
  });

/** Create → Ready through the Kubernetes API, polled every 20 ms: milliseconds. */
async function timeBarePod(
  store: KubernetesStore,
  state: State,
  name: string,
  withDisk: boolean,
): Promise<number> {
  const started = performance.now();
  if (withDisk) {
    await store.create(
      PersistentVolumeClaimType,
      PersistentVolumeClaimType.schema.parse({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name, namespace: BENCH_NAMESPACE },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      }),
    );
  }
  await store.create(PodType, barePod(name, state.images.runner, withDisk ? name : undefined));
  for (;;) {
    const pod = await store.get(PodType, BENCH_NAMESPACE, name);
    if (pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true)
      return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function idleRss(state: State, workspaceId: string): Promise<number> {
  const pod = (
    await kubectl(state, [
      'get',
      'pods',
      '-n',
      state.orgNamespace,
      '-l',
      `agentry.dev/agent-computer=${workspaceId}`,
      '-o',
      'jsonpath={.items[0].metadata.name}',
    ])
  ).trim();
  const out = await kubectl(state, ['exec', '-n', state.orgNamespace, pod, '--', 'ps', '-eo', 'rss=']);
  return out
    .split('\n')
    .map((line) => Number(line.trim()))
    .filter((kib) => Number.isFinite(kib) && kib > 0)
    .reduce((sum, kib) => sum + kib, 0);
}

const fmt = (s: Summary): string => `p50 ${(s.p50 / 1000).toFixed(2)} s, p95 ${(s.p95 / 1000).toFixed(2)} s`;

async function measure(state: State): Promise<void> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(state.kubeconfig);
  const store = KubernetesStore.fromKubeConfig(kubeConfig);
  const bare: number[] = [];
  const bareDisk: number[] = [];
  const fresh: number[] = [];
  const existing: number[] = [];
  let workspaceId = '';
  for (let i = 0; i < N; i++) {
    progress(`round ${i + 1}/${N}`);
    bare.push(await timeBarePod(store, state, `bench-bare-${i}`, false));
    bareDisk.push(await timeBarePod(store, state, `bench-disk-${i}`, true));
    const created = await timeToInit(state, {});
    fresh.push(created.ms);
    workspaceId = created.workspaceId;
    existing.push((await timeToInit(state, { workspaceId })).ms);
  }
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  const rssKiB = await idleRss(state, workspaceId);
  const [b, bd, f, e] = [bare, bareDisk, fresh, existing].map(summarize) as [
    Summary,
    Summary,
    Summary,
    Summary,
  ];
  const sizes = await Promise.all(
    (['controlPlane', 'runner', 'lake'] as const).map(async (name) => {
      const { stdout } = await execFile('buildah', ['images', '--format', '{{.Size}}', state.images[name]]);
      return `${name} ${state.images[name]}: ${stdout.trim()}`;
    }),
  );
  console.log(`real node, N=${N}, load average ${load(1)}`);
  console.log(`| what | Agentry | baseline (same run) | ratio p50 |`);
  console.log(`| --- | --- | --- | --- |`);
  console.log(
    `| POST /tasks → init, new workspace | ${fmt(f)} | bare Pod of the runner image to Ready: ${fmt(b)} | ${(f.p50 / b.p50).toFixed(2)}× |`,
  );
  console.log(
    `| the same | ${fmt(f)} | bare PVC + Pod to Ready: ${fmt(bd)} | ${(f.p50 / bd.p50).toFixed(2)}× |`,
  );
  console.log(
    `| POST /tasks → init, existing workspace | ${fmt(e)} | bare Pod to Ready: ${fmt(b)} | ${(e.p50 / b.p50).toFixed(2)}× |`,
  );
  console.log(`idle workspace Pod: ${(rssKiB / 1024).toFixed(1)} MiB RSS (its processes)`);
  for (const line of sizes) console.log(`image ${line}`);
  await store.close();
}

const deployment = await startRealNodeDeployment();
try {
  await measure(deployment.state);
} finally {
  await destroyRealNode(deployment.node);
}
