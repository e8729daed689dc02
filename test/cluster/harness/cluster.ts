import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { AGENTRY_RESOURCE_TYPES } from '../../../crds/index.js';
import { customResourceDefinitionYaml } from '../../../crds/generate.js';
import { ProbeType } from '../../contracts/probe.js';
import { freeLoopbackPort } from '../../support/free-port.js';
import { HARNESS_DIR, HarnessError, buildTools, run } from './tools.js';
import type { Tools } from './tools.js';

const WORKDIR_PREFIX = 'agentry-cluster-';
const FIXTURES = 'test/cluster/fixtures';
const KWOK_VERSION = process.env.KWOK_VERSION ?? 'v0.8.0';

/** What a running harness left on disk, so that a later run (or teardown) can find and stop it. */
export const ClusterStateSchema = z.object({
  ownerPid: z.number().int(),
  name: z.string(),
  workdir: z.string(),
  kubeconfig: z.string(),
  kwokctl: z.string(),
  toolsPath: z.string(),
  motoPid: z.number().int().optional(),
  motoUrl: z.string().optional(),
});
export type ClusterState = z.infer<typeof ClusterStateSchema>;

/** The state part of a started cluster (what a state file or an environment variable carries). */
export const clusterStateOf = (cluster: ClusterState): ClusterState => ClusterStateSchema.parse(cluster);

export interface Cluster extends ClusterState {
  tools: Tools;
  /** Deletes the cluster and stops moto; safe to call twice. */
  stop(): Promise<void>;
}

const stateFile = (workdir: string): string => join(workdir, 'state.json');

/** The environment variable through which global setup tells test workers about the cluster. */
export const CLUSTER_ENV = 'AGENTRY_TEST_CLUSTER';

export function clusterStateFromEnv(value: string | undefined): ClusterState | undefined {
  if (value === undefined) return undefined;
  return ClusterStateSchema.parse(JSON.parse(value));
}

function kwokEnv(state: Pick<ClusterState, 'workdir' | 'toolsPath'>): NodeJS.ProcessEnv {
  // kubectl must be on PATH for kwokctl; KWOK_WORKDIR keeps each run's cluster apart from others'.
  return {
    ...process.env,
    KWOK_WORKDIR: state.workdir,
    PATH: `${state.toolsPath}:${process.env.PATH ?? ''}`,
  };
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new HarnessError(`${what} not ready within ${timeoutMs} ms`);
    await new Promise((done) => setTimeout(done, 200));
  }
}

/** Starts moto (S3 and SQS) on a free loopback port; detached into its own process group. */
export async function startMoto(tools: Tools, workdir: string): Promise<{ pid: number; url: string }> {
  const port = await freeLoopbackPort();
  const child = spawn(tools.MOTO_SERVER, ['-H', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'ignore', 'ignore'],
    detached: true,
    cwd: workdir,
  });
  child.unref();
  if (child.pid === undefined) throw new HarnessError('moto_server did not start');
  const url = `http://127.0.0.1:${port}`;
  await waitFor('moto', async () => (await fetch(`${url}/moto-api/`)).ok);
  return { pid: child.pid, url };
}

/**
 * kubectl's discovery cache is keyed by host:port, and kwokctl reuses ports across clusters: a cache
 * of its own per cluster keeps kubectl from trusting an earlier cluster's API list.
 */
export const kubectlFlags = (state: Pick<ClusterState, 'kubeconfig' | 'workdir'>): string[] => [
  '--kubeconfig',
  state.kubeconfig,
  '--cache-dir',
  join(state.workdir, 'kubectl-cache'),
];

/** kubectl (the harness's own build) against a harness cluster. */
export async function kubectl(
  state: Pick<ClusterState, 'kubeconfig' | 'workdir' | 'toolsPath'>,
  args: string[],
  input?: string,
): Promise<string> {
  return run('kubectl', [...kubectlFlags(state), ...args], {
    env: kwokEnv(state),
    ...(input === undefined ? {} : { input }),
  });
}

const PROBE_VM = `apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: { name: harness-probe, namespace: default }
spec: { runStrategy: Always }
`;

/**
 * The fake virt-controller's stages, proven to work: kwok gives up for good on a Stage whose kind
 * its discovery does not list yet (even after the CRD is Established), so a probe VM must start,
 * and the stages are recreated until it does (waits of 10 s, 20 s, … 60 s: 3.5 min in all).
 */
async function installVirtControllerStages(state: ClusterState): Promise<void> {
  const stages = join(FIXTURES, 'kubevirt-stages.yaml');
  await kubectl(state, ['apply', '-f', '-'], PROBE_VM);
  for (let attempt = 1; ; attempt++) {
    await kubectl(state, ['apply', '-f', stages]);
    const running = await kubectl(state, [
      'wait',
      '--for=jsonpath={.status.printableStatus}=Running',
      // Longer each time: on a loaded machine kwok's stage controller may just be slow, not stuck.
      `--timeout=${10 * attempt}s`,
      'virtualmachine/harness-probe',
      '-n',
      'default',
    ]).then(
      () => true,
      () => false,
    );
    if (running) break;
    if (attempt === 6)
      throw new HarnessError('the fake virt-controller stages never started a VirtualMachine (3.5 min)');
    process.stderr.write(`fake virt-controller stages did not take (attempt ${attempt}); recreating them\n`);
    await kubectl(state, ['delete', '-f', stages, '--wait=true']);
  }
  await kubectl(state, ['delete', 'virtualmachine/harness-probe', '-n', 'default']);
}

async function installFixtures(state: ClusterState, fakeKubevirt: boolean): Promise<void> {
  const gomodcache = (await run('go', ['env', 'GOMODCACHE'])).trim();
  const stages = await kubectl(state, [
    'kustomize',
    join(gomodcache, `sigs.k8s.io/kwok@${KWOK_VERSION}/kustomize/stage/fast`),
  ]);
  // Node and pod stages before the nodes: a node made earlier stays NotReady.
  await kubectl(state, ['apply', '-f', '-'], stages);
  await kubectl(state, ['apply', '-f', join(FIXTURES, 'nodes.yaml')]);
  const crds = [...AGENTRY_RESOURCE_TYPES, ProbeType]
    .map((type) => customResourceDefinitionYaml(type))
    .join('---\n');
  await kubectl(state, ['apply', '-f', '-'], crds);
  if (fakeKubevirt) await kubectl(state, ['apply', '-f', join(FIXTURES, 'kubevirt-vm-crd.yaml')]);
  await kubectl(state, ['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  if (fakeKubevirt) await installVirtControllerStages(state);
  await kubectl(state, ['wait', '--for=condition=Ready', '--timeout=60s', 'node', '--all']);
  // The discovery cache predates the CRDs; `kubectl get agentry` must see them.
  await rm(join(state.workdir, 'kubectl-cache'), { recursive: true, force: true });
}

/** The kwokctl configuration every harness cluster starts from: all listeners on loopback. */
export const LOOPBACK_KWOKCTL_CONFIG = join(HARNESS_DIR, 'kwokctl-loopback.yaml');

/** Where kwokctl keeps a cluster's PKI (ca.crt, admin.crt, admin.key) once it is created. */
export const clusterPkiDir = (state: Pick<ClusterState, 'workdir' | 'name'>): string =>
  join(state.workdir, 'clusters', state.name, 'pki');

async function createCluster(state: ClusterState, tools: Tools, kwokctlConfig: string): Promise<void> {
  await run(
    tools.KWOKCTL,
    [
      '-c',
      kwokctlConfig,
      'create',
      'cluster',
      '--name',
      state.name,
      '--runtime',
      'binary',
      '--kube-apiserver-binary',
      tools.KUBE_APISERVER,
      '--kube-controller-manager-binary',
      tools.KUBE_CONTROLLER_MANAGER,
      '--kube-scheduler-binary',
      tools.KUBE_SCHEDULER,
      '--kwok-controller-binary',
      tools.KWOK,
      '--etcd-binary',
      tools.ETCD,
      '--enable-crds=Stage',
      '--kubeconfig',
      state.kubeconfig,
      '--wait',
      '2m',
    ],
    { env: kwokEnv(state), timeoutMs: 300_000 },
  );
}

/** Stops what a state file names: the kwok cluster (all its processes) and moto; removes the workdir. */
export async function destroyCluster(state: ClusterState): Promise<void> {
  await run(state.kwokctl, ['delete', 'cluster', '--name', state.name, '--kubeconfig', state.kubeconfig], {
    env: kwokEnv(state),
    timeoutMs: 120_000,
  }).catch(() => undefined);
  if (state.motoPid !== undefined && isAlive(state.motoPid)) {
    try {
      process.kill(-state.motoPid, 'SIGKILL');
    } catch {
      process.kill(state.motoPid, 'SIGKILL');
    }
  }
  await rm(state.workdir, { recursive: true, force: true });
}

/** Finds clusters whose harness process died (kill -9, a crashed CI run) and destroys them. */
export async function reapStaleClusters(): Promise<string[]> {
  const reaped: string[] = [];
  for (const entry of await readdir(tmpdir())) {
    if (!entry.startsWith(WORKDIR_PREFIX)) continue;
    const workdir = join(tmpdir(), entry);
    const raw = await readFile(stateFile(workdir), 'utf8').catch(() => undefined);
    const parsed = raw === undefined ? undefined : ClusterStateSchema.safeParse(JSON.parse(raw));
    if (parsed?.success !== true || isAlive(parsed.data.ownerPid)) continue;
    await destroyCluster(parsed.data);
    reaped.push(parsed.data.name);
  }
  return reaped;
}

export interface StartClusterOptions {
  /** The process whose death makes the cluster stale (default: this one). */
  ownerPid?: number;
  /** Binaries already built (e.g. a superset with a real node's); built here when absent. */
  tools?: Tools;
  /** Writes the kwokctl configuration for this cluster and returns its path (default: loopback). */
  kwokctlConfig?: (state: ClusterState) => Promise<string>;
  /**
   * KubeVirt's VirtualMachine CRD and KWOK stages playing virt-controller (default). False for a
   * cluster where real KubeVirt is installed: its operator owns the CRD, and stages would race it.
   */
  fakeKubevirt?: boolean;
}

/** A KWOK cluster on loopback with Agentry's CRDs, the fake virt-controller (unless told not to) and moto. */
export async function startCluster(options: StartClusterOptions = {}): Promise<Cluster> {
  await reapStaleClusters();
  const workdir = await mkdtemp(join(tmpdir(), WORKDIR_PREFIX));
  const tools = options.tools ?? (await buildTools(join(workdir, 'tools.env')));
  const state: ClusterState = {
    ownerPid: options.ownerPid ?? process.pid,
    name: `agentry-${process.pid}-${Date.now().toString(36)}`,
    workdir,
    kubeconfig: join(workdir, 'kubeconfig'),
    kwokctl: resolve(tools.KWOKCTL),
    toolsPath: tools.TOOLS_PATH,
  };
  await writeFile(stateFile(workdir), JSON.stringify(state));
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await destroyCluster(state);
  };
  try {
    const kwokctlConfig =
      options.kwokctlConfig === undefined ? LOOPBACK_KWOKCTL_CONFIG : await options.kwokctlConfig(state);
    await createCluster(state, tools, kwokctlConfig);
    const moto = await startMoto(tools, workdir);
    Object.assign(state, { motoPid: moto.pid, motoUrl: moto.url });
    await writeFile(stateFile(workdir), JSON.stringify(state));
    await installFixtures(state, options.fakeKubevirt ?? true);
  } catch (err) {
    await stop();
    throw err;
  }
  return { ...state, tools, stop };
}

/** Pids of the cluster's processes, from kwokctl's pid files (for teardown checks). */
export async function clusterPids(state: Pick<ClusterState, 'workdir' | 'name'>): Promise<number[]> {
  const dir = join(state.workdir, 'clusters', state.name, 'pids');
  const files = await readdir(dir).catch(() => []);
  const pids = await Promise.all(
    files.map(async (file) => Number((await readFile(join(dir, file), 'utf8')).trim())),
  );
  return pids.filter((pid) => Number.isInteger(pid) && pid > 0);
}

export { isAlive };
