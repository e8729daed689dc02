// KubeVirt and CDI installed on the real node the way their operators are installed anywhere: the
// operator manifest, then the custom resource, with emulation instead of hardware virtualization
// (this machine has none) and everything on the real node (KWOK's fake nodes would "run" any Pod).
import { readFile } from 'node:fs/promises';
import { parseAllDocuments, stringify } from 'yaml';
import { z } from 'zod';
import { kubectlFlags } from '../../cluster/harness/cluster.js';
import { HarnessError, run } from '../../cluster/harness/tools.js';
import { REAL_NODE_SELECTOR } from '../../realnode/harness/install-agentry.js';
import type { RealNodeEnv } from '../../realnode/harness/env.js';
import type { KubevirtBuilds } from './builds.js';

export const KUBEVIRT_NAMESPACE = 'kubevirt';
export const CDI_NAMESPACE = 'cdi';
/** The StorageClass VM disks go to: the node's local-path-provisioner. */
export const VM_STORAGE_CLASS = 'local-path';

type Kubectl = (args: string[], options?: { input?: string; timeoutMs?: number }) => Promise<string>;

function kubectlFor(node: RealNodeEnv): Kubectl {
  return (args, options = {}) =>
    run('kubectl', [...kubectlFlags(node.cluster), ...args], {
      env: { ...process.env, PATH: `${node.toolsPath}:${process.env.PATH ?? ''}` },
      timeoutMs: options.timeoutMs ?? 120_000,
      ...(options.input === undefined ? {} : { input: options.input }),
    });
}

const ObjectSchema = z.looseObject({ kind: z.string().optional() });
const DeploymentSpecSchema = z.looseObject({
  template: z.looseObject({ spec: z.looseObject({}) }),
});

/**
 * The operator manifest with its Deployment on the real node, one replica (two cores here), and
 * without its affinity (virt-operator requires a control-plane node: KWOK's control plane is not a node).
 */
export function onRealNode(manifest: string): string {
  return parseAllDocuments(manifest)
    .map((doc) => ObjectSchema.nullable().parse(doc.toJS()))
    .filter((object) => object !== null)
    .map((object) => {
      if (object.kind !== 'Deployment') return object;
      const spec = DeploymentSpecSchema.parse(object.spec);
      const { affinity: _affinity, ...podSpec } = spec.template.spec;
      return {
        ...object,
        spec: {
          ...spec,
          replicas: 1,
          template: { ...spec.template, spec: { ...podSpec, nodeSelector: REAL_NODE_SELECTOR } },
        },
      };
    })
    .map((object) => stringify(object))
    .join('---\n');
}

/** KubeVirt's resource: emulation (no /dev/kvm), one replica of each control-plane part, the real node. */
export function kubevirtResource(): unknown {
  const placement = { nodePlacement: { nodeSelector: REAL_NODE_SELECTOR } };
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'KubeVirt',
    metadata: { name: 'kubevirt', namespace: KUBEVIRT_NAMESPACE },
    spec: {
      imagePullPolicy: 'IfNotPresent',
      configuration: { developerConfiguration: { useEmulation: true } },
      infra: { replicas: 1, ...placement },
      workloads: placement,
    },
  };
}

/** CDI's resource: its control plane and its importer Pods on the real node. */
export function cdiResource(): unknown {
  return {
    apiVersion: 'cdi.kubevirt.io/v1beta1',
    kind: 'CDI',
    metadata: { name: 'cdi' },
    spec: {
      imagePullPolicy: 'IfNotPresent',
      infra: { nodeSelector: REAL_NODE_SELECTOR },
      workload: { nodeSelector: REAL_NODE_SELECTOR },
    },
  };
}

/** What the cluster looks like, for a failure's message: every Pod and the latest warnings. */
async function diagnostics(kubectl: Kubectl): Promise<string> {
  const pods = await kubectl(['get', 'pods', '-A', '-o', 'wide']).catch((err: unknown) => String(err));
  const warnings = await kubectl([
    'get',
    'events',
    '-A',
    '--field-selector',
    'type=Warning',
    '--sort-by=.lastTimestamp',
  ]).catch((err: unknown) => String(err));
  return `${pods}\n${warnings.split('\n').slice(-30).join('\n')}`;
}

async function waitAvailable(kubectl: Kubectl, what: string[], timeoutMs: number): Promise<void> {
  const started = Date.now();
  try {
    await kubectl(['wait', ...what, '--for=condition=Available', `--timeout=${timeoutMs / 1000}s`], {
      timeoutMs: timeoutMs + 30_000,
    });
  } catch (err) {
    throw new HarnessError(`${what.join(' ')} never became Available:\n${await diagnostics(kubectl)}`, {
      cause: err,
    });
  }
  process.stderr.write(`${what.join(' ')} Available in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

/** CDI fills a DataVolume's access and volume modes from the class's profile: local-path has none built in. */
async function describeLocalPathStorage(kubectl: Kubectl): Promise<void> {
  const deadline = Date.now() + 120_000;
  while ((await kubectl(['get', 'storageprofile', VM_STORAGE_CLASS]).catch(() => '')) === '') {
    if (Date.now() > deadline) throw new HarnessError(`CDI made no StorageProfile for ${VM_STORAGE_CLASS}`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  const claim = { accessModes: ['ReadWriteOnce'], volumeMode: 'Filesystem' };
  await kubectl([
    'patch',
    'storageprofile',
    VM_STORAGE_CLASS,
    '--type=merge',
    '-p',
    JSON.stringify({ spec: { claimPropertySets: [claim] } }),
  ]);
}

/** CDI first (virt-controller looks for DataVolumes when it starts), then KubeVirt; both Available. */
export async function installKubevirt(node: RealNodeEnv, builds: KubevirtBuilds): Promise<void> {
  const kubectl = kubectlFor(node);
  const apply = async (manifest: string): Promise<void> => {
    await kubectl(['apply', '--server-side', '-f', '-'], { input: manifest, timeoutMs: 180_000 });
  };
  await apply(onRealNode(await readFile(builds.cdiOperatorManifest, 'utf8')));
  await kubectl(['wait', 'crd/cdis.cdi.kubevirt.io', '--for=condition=Established', '--timeout=60s']);
  await apply(stringify(cdiResource()));
  await waitAvailable(kubectl, ['cdi/cdi'], 900_000);
  await describeLocalPathStorage(kubectl);
  await apply(onRealNode(await readFile(builds.kubevirtOperatorManifest, 'utf8')));
  await kubectl(['wait', 'crd/kubevirts.kubevirt.io', '--for=condition=Established', '--timeout=60s']);
  await apply(stringify(kubevirtResource()));
  await waitAvailable(kubectl, ['-n', KUBEVIRT_NAMESPACE, 'kubevirt/kubevirt'], 1_200_000);
}
