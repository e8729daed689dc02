// Reconcile throughput against a real kube-apiserver (the KWOK cluster of test/cluster/harness):
import { randomBytes } from 'node:crypto';
import { ExecutorCatalog } from '../platform/executor-catalog.js';
import { InstallationKey } from '../platform/installation-key.js';
// - baseline: N PVC + Pod pairs created directly with @kubernetes/client-node, timed from the first
//   create until every Pod is Ready;
// - measured: N AgentComputers (pod runtime) created with the Kubernetes store while the operator runs
//   in this process, timed from the first create until every one is `ready` (agentComputerStatus).
// Both run in the same process and cluster, in namespaces of their own, each disk backed by a
// PersistentVolume made beforehand and pre-bound to its claim (the cluster has no provisioner). The
// benchmark adds fake nodes for 2·N pods and a second service range (the default one holds 253).
// Each run starts a cluster of its own (startCluster) and deletes it at the end.
//
// Run: node --expose-gc --import ./test/support/register-swc.mjs bench/reconcile-throughput.ts
// Env: BENCH_N               AgentComputers, and baseline Pods (default 500)
//      BENCH_WORKERS         agentComputerWorkers; a list (4,8,16) runs each in a fresh cluster and
//                            process and prints a summary (default 4)
//      BENCH_KEEPALIVE       1: one keep-alive https.Agent per client, for the operator's store, the
//                            benchmark's store and client-node alike (default 0: as shipped, a new
//                            TLS connection per request)
//      BENCH_CONCURRENCY     creates in flight, on both sides (default 16)
//      BENCH_ORDER           baseline-first (default) or measured-first
//      BENCH_STALL_MS        fail when no more become ready for this long (default 120000)
import { spawn } from 'node:child_process';
import https from 'node:https';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { RequestContext, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { z } from 'zod';
import { agentComputerStatus } from '../api/agent-computer/present.js';
import {
  AgentComputerSpecSchema,
  AgentComputerType,
  NamespaceType,
  ObjectMetaSchema,
} from '../crds/index.js';
import type { ResourceType } from '../crds/index.js';
import { startOperator } from '../operator/operator.js';
import type { PersistentVolumeClaim, Pod } from '../operator/runtimes/kube-objects.js';
import { PodRuntime } from '../operator/runtimes/pod.js';
import { createLogger } from '../platform/log.js';
import { KubernetesStore } from '../platform/store/kubernetes.js';
import { startCluster } from '../test/cluster/harness/cluster.js';
import { PersistentVolumeType } from '../test/cluster/kube-test-types.js';

const N = Number(process.env.BENCH_N ?? 500);
const WORKERS = (process.env.BENCH_WORKERS ?? '4').split(',').map((w) => Number(w.trim()));
const KEEPALIVE = process.env.BENCH_KEEPALIVE === '1';
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ORDER = process.env.BENCH_ORDER === 'measured-first' ? 'measured-first' : 'baseline-first';
const POLL_MS = 250;
/** Gives up when no more become ready for this long (a failing reconcile backs off for minutes). */
const STALL_MS = Number(process.env.BENCH_STALL_MS ?? 120_000);
/** Small enough that any number of them fit on the fake nodes. */
const RESOURCES = { cpu: '10m', memory: '16Mi', disk: '1Gi' };
const IMAGE = 'registry.invalid/agentry-runner:bench';
const PODS_PER_NODE = 110;

// ---------------------------------------------------------------------------------------------
// Clients: a KubeConfig that counts requests and, with BENCH_KEEPALIVE=1, reuses connections.

/** TLS connections opened by this process (every client, every phase): https agents call tls.connect. */
let sockets = 0;
tls.connect = new Proxy(tls.connect, {
  apply(target, thisArg, args): unknown {
    sockets++;
    return Reflect.apply(target, thisArg, args);
  },
});

/**
 * client-node makes a new https.Agent per request (KubeConfig.createAgent), and the Kubernetes
 * store's transport takes the agent from applyToHTTPSOptions: without keep-alive, every request is
 * a new TCP connection and TLS handshake. This subclass counts requests and can swap in one agent.
 */
class BenchKubeConfig extends KubeConfig {
  requests = 0;
  private agent: https.Agent | undefined;

  constructor(
    file: string,
    private readonly keepAlive: boolean,
  ) {
    super();
    this.loadFromFile(file);
  }

  /** The Kubernetes store's path (KubeConfigTransport). */
  override async applyToHTTPSOptions(opts: https.RequestOptions): Promise<void> {
    await super.applyToHTTPSOptions(opts);
    this.requests++;
    if (this.keepAlive) opts.agent = await this.sharedAgent();
  }

  /** client-node's generated APIs' path. */
  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    this.requests++;
    if (this.keepAlive) context.setAgent(await this.sharedAgent());
  }

  private async sharedAgent(): Promise<https.Agent> {
    if (this.agent === undefined) {
      const tls: https.RequestOptions = {};
      await super.applyToHTTPSOptions(tls);
      this.agent = new https.Agent({ keepAlive: true, ca: tls.ca, cert: tls.cert, key: tls.key });
    }
    return this.agent;
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const seconds = (ms: number): string => (ms / 1000).toFixed(2);
const mib = (bytes: number): number => Math.round((bytes / 2 ** 20) * 10) / 10;

/** Runs `task(i)` for i in [0, count) with at most `limit` in flight. */
async function pool(count: number, limit: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, lane));
}

/** Polls `readyNames` until `count` names are ready; the time each was first seen ready, from `start`. */
async function waitAllReady(
  what: string,
  count: number,
  start: number,
  readyNames: () => Promise<string[]>,
): Promise<number[]> {
  const seen = new Map<string, number>();
  let progressAt = 0;
  while (seen.size < count) {
    const now = performance.now() - start;
    if (now - progressAt > STALL_MS) {
      throw new Error(`${what}: ${seen.size}/${count} ready, none more for ${STALL_MS} ms`);
    }
    for (const name of await readyNames()) {
      if (seen.has(name)) continue;
      seen.set(name, now);
      progressAt = now;
    }
    if (seen.size < count) await sleep(POLL_MS);
  }
  return [...seen.values()].sort((a, b) => a - b);
}

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;

interface PhaseResult {
  totalMs: number;
  createdMs: number;
  p50Ms: number;
  p95Ms: number;
  requests: number;
  sockets: number;
}

function memory(): { rssMiB: number; heapUsedMiB: number } {
  const usage = process.memoryUsage();
  return { rssMiB: mib(usage.rss), heapUsedMiB: mib(usage.heapUsed) };
}

function collectGarbage(): void {
  const gc: unknown = Reflect.get(globalThis, 'gc');
  if (typeof gc === 'function') Reflect.apply(gc, undefined, []);
}

// ---------------------------------------------------------------------------------------------
// Cluster preparation: fake nodes for the pods, pre-bound volumes for the claims (with the store:
// client-node's models are classes, which plain objects may not stand in for under our lint rules).

const LooseStatusSchema = z
  .looseObject({ conditions: z.array(z.looseObject({ type: z.string(), status: z.string() })).optional() })
  .optional();
const NodeSchema = z.object({
  apiVersion: z.literal('v1'),
  kind: z.literal('Node'),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({}).optional(),
  status: LooseStatusSchema,
});
const NodeType: ResourceType<z.infer<typeof NodeSchema>> = {
  group: '',
  version: 'v1',
  kind: 'Node',
  plural: 'nodes',
  namespaced: false,
  hasStatusSubresource: true,
  schema: NodeSchema,
};
/**
 * kube-apiserver's default service range is 10.0.0.0/24: 253 ClusterIPs, and the pod runtime makes a
 * Service per AgentComputer. A second ServiceCIDR (GA since 1.33) makes room without a flag.
 */
const ServiceCidrSchema = z.object({
  apiVersion: z.literal('networking.k8s.io/v1'),
  kind: z.literal('ServiceCIDR'),
  metadata: ObjectMetaSchema,
  spec: z.object({ cidrs: z.array(z.string()) }),
  status: LooseStatusSchema,
});
const ServiceCidrType: ResourceType<z.infer<typeof ServiceCidrSchema>> = {
  group: 'networking.k8s.io',
  version: 'v1',
  kind: 'ServiceCIDR',
  plural: 'servicecidrs',
  namespaced: false,
  hasStatusSubresource: true,
  schema: ServiceCidrSchema,
};

async function addServiceRange(store: KubernetesStore): Promise<void> {
  await store.create(ServiceCidrType, {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'ServiceCIDR',
    metadata: { name: 'bench' },
    spec: { cidrs: ['10.96.0.0/16'] },
  });
  for (;;) {
    const range = await store.get(ServiceCidrType, undefined, 'bench');
    if (range?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true) return;
    await sleep(POLL_MS);
  }
}

async function addNodes(store: KubernetesStore, pods: number): Promise<void> {
  const count = Math.ceil(pods / (PODS_PER_NODE - 10));
  const capacity = { cpu: '32', memory: '256Gi', pods: String(PODS_PER_NODE) };
  await pool(count, CONCURRENCY, (i) =>
    store.create(NodeType, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: `bench-node-${i}`,
        annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
        labels: { 'kubernetes.io/hostname': `bench-node-${i}`, 'kubernetes.io/os': 'linux', type: 'kwok' },
      },
      status: { allocatable: capacity, capacity },
    }),
  );
  for (;;) {
    const { items } = await store.list(NodeType, { labelSelector: 'type=kwok' });
    const ready = items.filter((node) =>
      node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    );
    if (ready.length >= count) return;
    await sleep(POLL_MS);
  }
}

async function addNamespaceWithVolumes(
  store: KubernetesStore,
  namespace: string,
  claims: string[],
): Promise<void> {
  await store.create(NamespaceType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  await pool(claims.length, CONCURRENCY, (i) =>
    store.create(PersistentVolumeType, {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: `${namespace}-${i}` },
      spec: {
        capacity: { storage: '20Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: '',
        hostPath: { path: `/tmp/agentry-bench/${namespace}-${i}` },
        claimRef: { namespace, name: claims[i] },
      },
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// Baseline: what a client does by hand for one workload, a claim and a pod (as the runtime makes them).

/**
 * client-node's models are classes and its API functions take instances; what goes on the wire is
 * their JSON, which these objects (checked against our own types) are.
 */
const asV1Pod = (pod: Pod): V1Pod => pod as unknown as V1Pod;
const asV1Claim = (claim: PersistentVolumeClaim): V1PersistentVolumeClaim =>
  claim as unknown as V1PersistentVolumeClaim;

function baselinePod(namespace: string, name: string): Pod {
  const labels = { 'app.kubernetes.io/name': 'agentry-runner', 'agentry.dev/agent-computer': name };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels },
    spec: {
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      restartPolicy: 'Always',
      securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000 },
      containers: [
        {
          name: 'runner',
          image: IMAGE,
          command: ['agentry', 'runner'],
          ports: [{ name: 'runner', containerPort: 8080, protocol: 'TCP' }],
          readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 5, failureThreshold: 3 },
          resources: {
            requests: { cpu: RESOURCES.cpu, memory: RESOURCES.memory },
            limits: { cpu: RESOURCES.cpu, memory: RESOURCES.memory },
          },
          volumeMounts: [{ name: 'code', mountPath: '/code' }],
        },
      ],
      volumes: [{ name: 'code', persistentVolumeClaim: { claimName: `${name}-disk` } }],
    },
  };
}

function baselineClaim(namespace: string, name: string): PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: RESOURCES.disk } } },
  };
}

async function runBaseline(
  admin: KubernetesStore,
  kubeconfig: string,
  namespace: string,
): Promise<PhaseResult> {
  const kc = new BenchKubeConfig(kubeconfig, KEEPALIVE);
  const core = kc.makeApiClient(CoreV1Api);
  const names = Array.from({ length: N }, (_, i) => `bp-${i}`);
  await addNamespaceWithVolumes(
    admin,
    namespace,
    names.map((name) => `${name}-disk`),
  );
  const requests0 = kc.requests;
  const sockets0 = sockets;
  const start = performance.now();
  let createdMs = 0;
  const creating = pool(N, CONCURRENCY, async (i) => {
    const name = names[i] ?? '';
    const body = asV1Claim(baselineClaim(namespace, `${name}-disk`));
    await core.createNamespacedPersistentVolumeClaim({ namespace, body });
    await core.createNamespacedPod({ namespace, body: asV1Pod(baselinePod(namespace, name)) });
  }).then(() => {
    createdMs = performance.now() - start;
  });
  const ready = await waitAllReady('baseline pods', N, start, async () => {
    const { items } = await core.listNamespacedPod({ namespace });
    return items
      .filter((pod) => pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
      .map((pod) => pod.metadata?.name ?? '');
  });
  await creating;
  const totalMs = performance.now() - start;
  return {
    totalMs,
    createdMs,
    p50Ms: percentile(ready, 50),
    p95Ms: percentile(ready, 95),
    requests: kc.requests - requests0,
    sockets: sockets - sockets0,
  };
}

// ---------------------------------------------------------------------------------------------
// Measured: AgentComputers through the operator.

interface MeasuredResult extends PhaseResult {
  workers: number;
  operatorRequests: number;
  memory: {
    before: ReturnType<typeof memory>;
    afterStart: ReturnType<typeof memory>;
    peakRssMiB: number;
    after: ReturnType<typeof memory>;
    afterGc: ReturnType<typeof memory>;
  };
  reconciles: Record<string, number>;
  reconcileSeconds: Record<string, number>;
  reconcileErrors: number;
}

async function reconcileMetrics(
  registry: Registry,
): Promise<Pick<MeasuredResult, 'reconciles' | 'reconcileSeconds' | 'reconcileErrors'>> {
  const reconciles: Record<string, number> = {};
  const reconcileSeconds: Record<string, number> = {};
  const duration = await registry.getSingleMetric('agentry_reconcile_duration_seconds')?.get();
  for (const value of duration?.values ?? []) {
    if (value.labels.controller !== 'agentcomputer') continue;
    const result = String(value.labels.result);
    // A histogram's values carry their series name (_count, _sum, _bucket) beside the labels.
    const series = 'metricName' in value ? value.metricName : undefined;
    if (series === 'agentry_reconcile_duration_seconds_count') reconciles[result] = value.value;
    if (series === 'agentry_reconcile_duration_seconds_sum')
      reconcileSeconds[result] = Math.round(value.value * 100) / 100;
  }
  const errors = await registry.getSingleMetric('agentry_reconcile_errors_total')?.get();
  const reconcileErrors = (errors?.values ?? [])
    .filter((value) => value.labels.controller === 'agentcomputer')
    .reduce((sum, value) => sum + value.value, 0);
  return { reconciles, reconcileSeconds, reconcileErrors };
}

async function runMeasured(
  admin: KubernetesStore,
  kubeconfig: string,
  namespace: string,
  workers: number,
): Promise<MeasuredResult> {
  const benchKc = new BenchKubeConfig(kubeconfig, KEEPALIVE);
  const client = KubernetesStore.fromKubeConfig(benchKc);
  const names = Array.from({ length: N }, (_, i) => `ac-${i}`);
  await addNamespaceWithVolumes(
    admin,
    namespace,
    names.map((name) => `${name}-disk`),
  );

  collectGarbage();
  const before = memory();
  const operatorKc = new BenchKubeConfig(kubeconfig, KEEPALIVE);
  const store = KubernetesStore.fromKubeConfig(operatorKc);
  const logger = createLogger({ level: 'silent' });
  const registry = new Registry();
  const runtime = new PodRuntime({
    store,
    controlNamespace: 'agentry-system',
    defaultImage: IMAGE,
    defaults: RESOURCES,
    logger,
  });
  const operator = await startOperator({
    store,
    installationKey: new InstallationKey(randomBytes(32)),
    executors: new ExecutorCatalog(),
    logger,
    registry,
    runtimes: new Map([['pod', runtime]]),
    defaultRuntime: 'pod',
    agentComputerWorkers: workers,
  });
  let peakRss = 0;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 100);
  try {
    const afterStart = memory();
    const requests0 = benchKc.requests + operatorKc.requests;
    const operatorRequests0 = operatorKc.requests;
    const sockets0 = sockets;
    const start = performance.now();
    let createdMs = 0;
    const creating = pool(N, CONCURRENCY, (i) =>
      client.create(AgentComputerType, {
        apiVersion: 'agentry.dev/v1alpha1',
        kind: 'AgentComputer',
        metadata: { name: names[i] ?? '', namespace },
        spec: AgentComputerSpecSchema.parse({ runtime: 'pod', idleTimeout: '0s' }),
      }),
    ).then(() => {
      createdMs = performance.now() - start;
    });
    let reasons = new Map<string, number>();
    const ready = await waitAllReady('agent computers', N, start, async () => {
      const { items } = await client.list(AgentComputerType, { namespace });
      reasons = new Map();
      for (const ac of items) {
        const reason = ac.status?.conditions?.find((c) => c.type === 'Ready')?.reason ?? 'none';
        reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
      }
      return items.filter((ac) => agentComputerStatus(ac) === 'ready').map((ac) => ac.metadata.name);
    }).catch((err: unknown) => {
      throw new Error(`Ready reasons: ${JSON.stringify(Object.fromEntries(reasons))}`, { cause: err });
    });
    await creating;
    const totalMs = performance.now() - start;
    const requests = benchKc.requests + operatorKc.requests - requests0;
    const operatorRequests = operatorKc.requests - operatorRequests0;
    const socketCount = sockets - sockets0;
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    const after = memory();
    collectGarbage();
    const afterGc = memory();
    return {
      workers,
      totalMs,
      createdMs,
      p50Ms: percentile(ready, 50),
      p95Ms: percentile(ready, 95),
      requests,
      operatorRequests,
      sockets: socketCount,
      memory: { before, afterStart, peakRssMiB: mib(peakRss), after, afterGc },
      ...(await reconcileMetrics(registry)),
    };
  } finally {
    clearInterval(sampler);
    await operator.stop();
    await store.close();
    await client.close();
  }
}

// ---------------------------------------------------------------------------------------------

interface RunResult {
  n: number;
  keepAlive: boolean;
  order: string;
  baseline: PhaseResult;
  measured: MeasuredResult;
  ratio: number;
}

function describePhase(label: string, phase: PhaseResult): void {
  console.log(
    `${label}: all ready in ${seconds(phase.totalMs)} s (creates done at ${seconds(phase.createdMs)} s; ` +
      `p50 ${seconds(phase.p50Ms)} s, p95 ${seconds(phase.p95Ms)} s); ` +
      `${phase.requests} requests, ${phase.sockets} new connections`,
  );
}

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

/** Several worker counts: each in a child process and cluster of its own, so memory is not shared. */
async function runEach(workerCounts: number[]): Promise<void> {
  const results: RunResult[] = [];
  for (const workers of workerCounts) {
    console.log(`\n=== ${workers} workers ===`);
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
        env: { ...process.env, BENCH_WORKERS: String(workers) },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        process.stdout.write(chunk);
      });
      child.on('error', reject);
      child.on('exit', (code) => {
        if (code === 0) resolve(text);
        else reject(new Error(`the run with ${workers} workers exited with ${code ?? 'a signal'}`));
      });
    });
    const line = output.split('\n').find((l) => l.startsWith(RESULT_PREFIX));
    if (line !== undefined) results.push(JSON.parse(line.slice(RESULT_PREFIX.length)) as RunResult);
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

if (WORKERS.length > 1) {
  await runEach(WORKERS);
} else {
  const result = await runOnce(WORKERS[0] ?? 4);
  console.log(`${RESULT_PREFIX}${JSON.stringify(result)}`);
}
