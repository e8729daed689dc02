// The kubevirt runtime against a real kube-apiserver with KubeVirt's VirtualMachine API, KWOK stages
// playing virt-controller (runStrategy Always → Running and ready, Halted → Stopped), and real
// garbage collection by kube-controller-manager.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { parse } from 'yaml';
import { z } from 'zod';
import { AgentComputerSpecSchema, AgentComputerType, SecretType, secretValue } from '../../crds/index.js';
import type { AgentComputer, AgentComputerSpec } from '../../crds/index.js';
import { createLogger } from '../../platform/log.js';
import { NetworkPolicyType, ServiceType, VirtualMachineType } from '../../operator/runtimes/kube-objects.js';
import type { VirtualMachine } from '../../operator/runtimes/kube-objects.js';
import { KubevirtRuntime } from '../../operator/runtimes/kubevirt.js';
import { RUNNER_PORT } from '../../operator/runtimes/types.js';
import type { WorkloadContext, WorkloadObservation } from '../../operator/runtimes/types.js';
import { clusterStore, createTestNamespace, eventually } from './support.js';

const CloudConfigSchema = z.object({
  write_files: z.array(
    z.object({ path: z.string(), owner: z.string(), permissions: z.string(), content: z.string() }),
  ),
  runcmd: z.array(z.array(z.string())),
});

const IMAGE = 'quay.io/containerdisks/agentry-runner:test';
const store = clusterStore();
const runtime = new KubevirtRuntime({
  store,
  controlNamespace: 'agentry-system',
  defaultImage: IMAGE,
  defaults: { cpu: '1', memory: '2Gi', disk: '20Gi' },
  storageClassName: 'fast-ssd',
  logger: createLogger({ level: 'silent' }),
});
const signal = new AbortController().signal;
let namespace: string;

beforeAll(async () => {
  namespace = await createTestNamespace(store, 'kubevirt-runtime');
});
afterAll(async () => {
  await store.close();
});

async function agentComputer(
  name: string,
  spec: Partial<AgentComputerSpec> = {},
  labels: Record<string, string> = {},
): Promise<{ ac: AgentComputer; context: WorkloadContext }> {
  const ac = await store.create(AgentComputerType, {
    apiVersion: 'agentry.dev/v1alpha1',
    kind: 'AgentComputer',
    metadata: { name, namespace, labels },
    spec: AgentComputerSpecSchema.parse({ runtime: 'kubevirt', ...spec }),
  });
  return {
    ac,
    context: { tokenSecretName: `${name}-token`, token: `tok-${randomBytes(12).toString('hex')}` },
  };
}

/** Applies the runtime (as the reconciler would, again and again) until `until` holds; keeps every reason. */
async function applyUntil(
  ac: AgentComputer,
  context: WorkloadContext,
  what: string,
  until: (observation: WorkloadObservation) => boolean,
  reasons: string[] = [],
): Promise<WorkloadObservation> {
  return eventually(what, async () => {
    const current = await store.get(AgentComputerType, namespace, ac.metadata.name);
    if (current === undefined) throw new Error(`AgentComputer ${ac.metadata.name} vanished`);
    const observation = await runtime.apply(current, context, signal);
    reasons.push(observation.reason);
    return until(observation) ? observation : undefined;
  });
}

const isReady = (o: WorkloadObservation): boolean => o.ready;

async function changeSpec(ac: AgentComputer, change: Partial<AgentComputerSpec>): Promise<void> {
  const current = await store.get(AgentComputerType, namespace, ac.metadata.name);
  if (current === undefined) throw new Error(`AgentComputer ${ac.metadata.name} vanished`);
  await store.replace(AgentComputerType, { ...current, spec: { ...current.spec, ...change } });
}

async function vmOf(name: string): Promise<VirtualMachine> {
  const vm = await store.get(VirtualMachineType, namespace, name);
  if (vm === undefined) throw new Error(`no VirtualMachine ${name}`);
  return vm;
}

const ownerOf = (ac: AgentComputer): unknown => [
  {
    apiVersion: 'agentry.dev/v1alpha1',
    kind: 'AgentComputer',
    name: ac.metadata.name,
    uid: ac.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  },
];

const WORKLOAD_LABELS = (name: string): Record<string, string> => ({
  'app.kubernetes.io/name': 'agentry-runner',
  'app.kubernetes.io/managed-by': 'agentry',
  'agentry.dev/agent-computer': name,
});

describe('a running VM workload', () => {
  let ac: AgentComputer;
  let context: WorkloadContext;
  let ready: WorkloadObservation;

  beforeAll(async () => {
    ({ ac, context } = await agentComputer('vm', {
      resources: { cpu: '1500m', memory: '4Gi', disk: '30Gi' },
      restartedAt: '2030-01-01T00:00:00Z',
    }));
    ready = await applyUntil(ac, context, 'VM ready', isReady);
  });

  it('reports the VM as its sandbox and the Service as its endpoint once KubeVirt says ready', () => {
    expect(ready).toMatchObject({
      provisioned: true,
      running: true,
      ready: true,
      sandboxId: 'vm',
      endpoint: `http://vm-runner.${namespace}.svc:${RUNNER_PORT}`,
      reason: 'RunnerReady',
    });
  });

  it('runs the VM (runStrategy Always), owned by the AgentComputer and labelled as its workload', async () => {
    const vm = await vmOf('vm');
    expect(vm.spec.runStrategy).toBe('Always');
    expect(vm.metadata.ownerReferences).toEqual(ownerOf(ac));
    expect(vm.metadata.labels).toEqual(WORKLOAD_LABELS('vm'));
  });

  it('boots from a DataVolume of spec.resources.disk imported from the image', async () => {
    const vm = await vmOf('vm');
    expect(vm.spec.dataVolumeTemplates).toEqual([
      {
        metadata: { name: 'vm-disk', labels: WORKLOAD_LABELS('vm') },
        spec: {
          storage: { resources: { requests: { storage: '30Gi' } }, storageClassName: 'fast-ssd' },
          source: { registry: { url: `docker://${IMAGE}` } },
        },
      },
    ]);
    expect(vm.spec.template?.spec).toMatchObject({
      volumes: expect.arrayContaining([{ name: 'rootdisk', dataVolume: { name: 'vm-disk' } }]),
    });
  });

  it('reads cloud-init from the Secret by reference, so the token is nowhere in the VM', async () => {
    const vm = await vmOf('vm');
    expect(vm.spec.template?.spec).toMatchObject({
      volumes: expect.arrayContaining([
        { name: 'cloudinitdisk', cloudInitNoCloud: { secretRef: { name: 'vm-cloud-init' } } },
      ]),
      domain: {
        devices: {
          disks: [
            { name: 'rootdisk', disk: { bus: 'virtio' } },
            { name: 'cloudinitdisk', disk: { bus: 'virtio' } },
          ],
        },
      },
    });
    expect(JSON.stringify(vm)).not.toContain(context.token);
  });

  it('sizes the guest from spec.resources, rounding CPUs up to whole cores', async () => {
    const vm = await vmOf('vm');
    expect(vm.spec.template?.spec).toMatchObject({ domain: { cpu: { cores: 2 }, memory: { guest: '4Gi' } } });
  });

  it('labels the VM template with the workload labels and annotates it with restartedAt', async () => {
    const vm = await vmOf('vm');
    expect(vm.spec.template?.metadata?.labels).toEqual({
      ...WORKLOAD_LABELS('vm'),
      'kubevirt.io/domain': 'vm',
    });
    expect(vm.spec.template?.metadata?.annotations).toEqual({
      'agentry.dev/restarted-at': '2030-01-01T00:00:00Z',
    });
  });

  it('writes a cloud-config that puts the token in a root-only file and starts agentry runner', async () => {
    const secret = await store.get(SecretType, namespace, 'vm-cloud-init');
    expect(secret?.metadata.ownerReferences).toEqual(ownerOf(ac));
    const userdata = secretValue(
      secret ?? { apiVersion: 'v1', kind: 'Secret', metadata: { name: '' } },
      'userdata',
    );
    expect(userdata?.startsWith('#cloud-config\n')).toBe(true);
    const config = CloudConfigSchema.parse(parse(userdata ?? ''));
    expect(config.write_files).toContainEqual({
      path: '/etc/agentry/runner.env',
      owner: 'root:root',
      permissions: '0600',
      content: `AGENTRY_RUNNER_TOKEN=${context.token}\nAGENTRY_RUNNER_PORT=${RUNNER_PORT}\nAGENTRY_RUNNER_WORKDIR=/code\nAGENTRY_RUNNER_STATE_DIR=/var/lib/agentry-runner\n`,
    });
    const unit = config.write_files.find((file) => file.path.endsWith('agentry-runner.service'));
    expect(unit?.content).toContain('ExecStart=/usr/bin/env agentry runner');
    expect(config.runcmd).toContainEqual(['systemctl', 'enable', '--now', 'agentry-runner.service']);
  });

  it('serves the runner port through a Service selecting the VM template labels', async () => {
    const service = await store.get(ServiceType, namespace, 'vm-runner');
    expect(service?.spec.selector).toEqual(WORKLOAD_LABELS('vm'));
    expect(service?.spec.ports).toMatchObject([{ port: RUNNER_PORT, targetPort: RUNNER_PORT }]);
    expect(service?.metadata.ownerReferences).toEqual(ownerOf(ac));
  });

  it('fences the VM with a NetworkPolicy that admits the control plane on the runner port, the API server on the others', async () => {
    const policy = await store.get(NetworkPolicyType, namespace, 'vm-runner');
    expect(policy?.spec.podSelector).toEqual({ matchLabels: WORKLOAD_LABELS('vm') });
    expect(policy?.spec.ingress).toMatchObject([
      { ports: [{ protocol: 'TCP', port: RUNNER_PORT }] },
      {
        from: [
          {
            podSelector: {
              matchExpressions: [{ key: 'app.kubernetes.io/name', operator: 'In', values: ['agentry-api'] }],
            },
          },
        ],
      },
    ]);
    expect(policy?.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(policy?.metadata.ownerReferences).toEqual(ownerOf(ac));
  });

  it('writes nothing when applied again to a converged workload', async () => {
    const versions = async (): Promise<(string | undefined)[]> => [
      (await store.get(VirtualMachineType, namespace, 'vm'))?.metadata.resourceVersion,
      (await store.get(SecretType, namespace, 'vm-cloud-init'))?.metadata.resourceVersion,
      (await store.get(ServiceType, namespace, 'vm-runner'))?.metadata.resourceVersion,
      (await store.get(NetworkPolicyType, namespace, 'vm-runner'))?.metadata.resourceVersion,
    ];
    const before = await versions();
    await runtime.apply(ac, context, signal);
    expect(await versions()).toEqual(before);
  });
});

describe('the life of a VM workload', () => {
  it('halts the VM on hibernation, keeping the VM and its disk template', async () => {
    const { ac, context } = await agentComputer('sleepy');
    await applyUntil(ac, context, 'ready', isReady);
    const disks = (await vmOf('sleepy')).spec.dataVolumeTemplates;
    await changeSpec(ac, { operatingMode: 'Hibernated' });
    const hibernated = await applyUntil(ac, context, 'hibernated', (o) => o.reason === 'Hibernated');
    expect(hibernated).toMatchObject({ provisioned: true, running: false, ready: false });
    const vm = await vmOf('sleepy');
    expect(vm.spec.runStrategy).toBe('Halted');
    expect(vm.status?.printableStatus).toBe('Stopped');
    expect(vm.spec.dataVolumeTemplates).toEqual(disks);
  });

  it('runs the VM again when resumed', async () => {
    const { ac, context } = await agentComputer('resumed', { operatingMode: 'Hibernated' });
    await applyUntil(ac, context, 'hibernated', (o) => o.reason === 'Hibernated');
    await changeSpec(ac, { operatingMode: 'Running' });
    await applyUntil(ac, context, 'ready again', isReady);
    expect((await vmOf('resumed')).spec.runStrategy).toBe('Always');
  });

  it('redeploys by halting the VM until Stopped, then running it on the new template and the same disk', async () => {
    const { ac, context } = await agentComputer('cycled');
    await applyUntil(ac, context, 'ready', isReady);
    const disks = (await vmOf('cycled')).spec.dataVolumeTemplates;
    await changeSpec(ac, { restartedAt: '2030-02-03T04:05:06Z' });
    const reasons: string[] = [];
    await applyUntil(ac, context, 'ready after redeploy', isReady, reasons);
    expect(reasons).toContain('Redeploying');
    const vm = await vmOf('cycled');
    expect(vm.spec.template?.metadata?.annotations?.['agentry.dev/restarted-at']).toBe(
      '2030-02-03T04:05:06Z',
    );
    expect(vm.metadata.annotations?.['agentry.dev/redeploying']).toBeUndefined();
    expect(vm.spec.dataVolumeTemplates).toEqual(disks);
  });

  it('keeps a redeploying VM halted while it has not stopped', async () => {
    const { ac, context } = await agentComputer('halting');
    await applyUntil(ac, context, 'ready', isReady);
    await changeSpec(ac, { restartedAt: '2030-02-03T04:05:06Z' });
    const current = await store.get(AgentComputerType, namespace, 'halting');
    const first = await runtime.apply(current ?? ac, context, signal);
    expect(first.reason).toBe('Redeploying');
    const vm = await vmOf('halting');
    expect(vm.spec.runStrategy).toBe('Halted');
    expect(vm.metadata.annotations?.['agentry.dev/redeploying']).toBe('2030-02-03T04:05:06Z');
  });

  it('reports a VM KubeVirt cannot start as a provision error naming the cause and the image', async () => {
    const { ac, context } = await agentComputer('broken', {}, { agentry_fail: 'ErrImagePull' });
    const failed = await applyUntil(ac, context, 'failed', (o) => o.provisionError !== undefined);
    expect(failed.reason).toBe('ProvisionFailed');
    expect(failed.provisionError).toContain('ErrImagePull');
    expect(failed.provisionError).toContain(IMAGE);
  });

  it('clones the root disk from a PVC when the image is pvc:<namespace>/<name>', async () => {
    const { ac, context } = await agentComputer('cloned', {
      resources: { image: 'pvc:golden-images/ubuntu-24' },
    });
    await applyUntil(ac, context, 'provisioned', (o) => o.provisioned);
    const [disk] = (await vmOf('cloned')).spec.dataVolumeTemplates ?? [];
    expect(disk).toMatchObject({
      spec: { source: { pvc: { namespace: 'golden-images', name: 'ubuntu-24' } } },
    });
  });
});

describe('removal', () => {
  const gone = async (name: string): Promise<boolean> =>
    (await store.get(VirtualMachineType, namespace, name)) === undefined &&
    (await store.get(SecretType, namespace, `${name}-cloud-init`)) === undefined &&
    (await store.get(ServiceType, namespace, `${name}-runner`)) === undefined &&
    (await store.get(NetworkPolicyType, namespace, `${name}-runner`)) === undefined;

  it('leaves garbage collection everything once the AgentComputer is deleted', async () => {
    const { ac, context } = await agentComputer('collected');
    await applyUntil(ac, context, 'ready', isReady);
    await store.delete(AgentComputerType, namespace, 'collected');
    await eventually('collected', async () => ((await gone('collected')) ? true : undefined), 45_000);
  });

  it('deletes what it made on remove(), and a second remove() is harmless', async () => {
    const { ac, context } = await agentComputer('removed');
    await applyUntil(ac, context, 'ready', isReady);
    await runtime.remove(ac);
    await runtime.remove(ac);
    await eventually('removed', async () => ((await gone('removed')) ? true : undefined));
  });
});
