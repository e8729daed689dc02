// The peer: N agent-sandbox Sandboxes (the runner's pod template, a disk claim, a Service) reconciled
// by agent-sandbox-controller as a process of its own, timed from the first create until every one
// is Ready.
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { ClusterState } from '../../test/cluster/harness/cluster.js';
import { kubectl } from '../../test/cluster/harness/cluster.js';
import type { KubernetesStore } from '../../platform/store/kubernetes.js';
import { indices } from '../support/pool.js';
import { until } from '../support/wait.js';
import { diskClaimSpec, runnerPodSpec } from '../reconcile-throughput/baseline.js';
import { addNamespaceWithVolumes } from '../reconcile-throughput/cluster-setup.js';
import { N, POLL_MS } from '../reconcile-throughput/config.js';
import { createUntilAllReady } from '../reconcile-throughput/phase.js';
import { startController } from './controller-process.js';
import { timeControllerPhase } from './controller-phase.js';
import type { ControllerPhase } from './controller-phase.js';
import type { PeerTools } from './peer-tools.js';
import { SandboxType, sandboxReady, withoutConversionWebhook } from './sandbox-type.js';

const CONDITIONS = 'jsonpath={.status.conditions}';
const ConditionsSchema = z.array(z.looseObject({ type: z.string(), status: z.string() })).nullable();
const NEVER = new AbortController().signal;

export async function installSandboxCrd(cluster: ClusterState, crdFile: string): Promise<void> {
  const crd = withoutConversionWebhook(await readFile(crdFile, 'utf8'));
  // create, not apply: the CRD is larger than apply's last-applied annotation may be.
  await kubectl(cluster, ['create', '-f', '-'], crd);
  // `kubectl wait` fails while the new CRD has no conditions yet: poll its Established condition.
  const established = async (): Promise<true | undefined> => {
    const out = await kubectl(cluster, ['get', 'crd/sandboxes.agents.x-k8s.io', '-o', CONDITIONS]);
    const conditions = out.trim() === '' ? [] : ConditionsSchema.parse(JSON.parse(out));
    return (conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True') ? true : undefined;
  };
  await until('the Sandbox CRD established', 60_000, established, { signal: NEVER, pollMs: POLL_MS });
}

/**
 * Its Helm chart's defaults (100 Sandbox workers, no client-side rate limit), less leader election
 * (one replica, as Agentry's phase), the webhook server and the metrics and probe listeners.
 */
const controllerArgs = [
  '--leader-elect=false',
  '--enable-webhook=false',
  '--metrics-bind-address=0',
  '--health-probe-bind-address=0',
];

/** Creates the Sandboxes from `start` on; when each was first seen Ready. */
async function createUntilReady(
  admin: KubernetesStore,
  namespace: string,
  names: readonly string[],
  start: number,
): Promise<{ ready: number[]; createdMs: number }> {
  const create = (i: number): Promise<unknown> =>
    admin.create(SandboxType, {
      apiVersion: 'agents.x-k8s.io/v1beta1',
      kind: 'Sandbox',
      metadata: { name: names[i] ?? '', namespace },
      spec: {
        podTemplate: {
          metadata: { labels: { 'app.kubernetes.io/name': 'agentry-runner' } },
          spec: runnerPodSpec(),
        },
        volumeClaimTemplates: [{ metadata: { name: 'code' }, spec: diskClaimSpec() }],
        service: true,
      },
    });
  return createUntilAllReady('sandboxes', start, create, async () => {
    const { items } = await admin.list(SandboxType, { namespace });
    return items.filter(sandboxReady).map((sandbox) => sandbox.metadata.name);
  });
}

export async function runSandboxPhase(
  admin: KubernetesStore,
  cluster: ClusterState,
  tools: PeerTools,
  namespace: string,
): Promise<ControllerPhase> {
  const names = indices(N).map((i) => `sb-${i}`);
  await addNamespaceWithVolumes(
    admin,
    namespace,
    names.map((name) => `code-${name}`),
  );
  const controller = await startController(
    'agent-sandbox-controller',
    tools.controller,
    controllerArgs,
    { PATH: process.env.PATH ?? '', KUBECONFIG: cluster.kubeconfig },
    /Starting workers.*"controller": ?"sandbox"/,
  );
  try {
    return await timeControllerPhase(controller, (start) => createUntilReady(admin, namespace, names, start));
  } finally {
    await controller.stop();
  }
}
