import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SecretType } from '../../crds/index.js';
import { PodType, VirtualMachineType } from '../../operator/runtimes/kube-objects.js';
import type { VirtualMachine } from '../../operator/runtimes/kube-objects.js';
import { clusterStore, createTestNamespace, eventually } from './support.js';

const store = clusterStore();
let namespace: string;

beforeAll(async () => {
  namespace = await createTestNamespace(store, 'kwok');
});
afterAll(async () => {
  await store.close();
});

const vm = (
  name: string,
  runStrategy: 'Always' | 'Halted',
  labels: Record<string, string> = {},
): VirtualMachine => ({
  apiVersion: 'kubevirt.io/v1',
  kind: 'VirtualMachine',
  metadata: { name, namespace, labels },
  spec: { runStrategy, template: { spec: { domain: { devices: {} } } } },
});

const printableStatus = (name: string, expected: string) => () =>
  store
    .get(VirtualMachineType, namespace, name)
    .then((found) => (found?.status?.printableStatus === expected ? found : undefined));

describe('KWOK nodes', () => {
  it('schedule a Pod onto a fake node, which KWOK makes Running', async () => {
    await store.create(PodType, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'hello', namespace },
      spec: { containers: [{ name: 'main', image: 'registry.invalid/agentry-runner:test' }] },
    });
    const running = await eventually('pod Running', () =>
      store
        .get(PodType, namespace, 'hello')
        .then((pod) => (pod?.status?.phase === 'Running' ? pod : undefined)),
    );
    expect(running.spec.nodeName).toMatch(/^kwok-node-[01]$/);
  });
});

describe('garbage collection by kube-controller-manager', () => {
  it('deletes a child when its owner is deleted', async () => {
    const owner = await store.create(SecretType, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'owner', namespace },
    });
    await store.create(SecretType, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'child',
        namespace,
        ownerReferences: [{ apiVersion: 'v1', kind: 'Secret', name: 'owner', uid: owner.metadata.uid ?? '' }],
      },
    });
    await store.delete(SecretType, namespace, 'owner');
    await eventually('child collected', async () =>
      (await store.get(SecretType, namespace, 'child')) === undefined ? true : undefined,
    );
  });
});

describe('the fake virt-controller (KWOK stages playing KubeVirt)', () => {
  it('runs a VirtualMachine whose runStrategy is Always', async () => {
    await store.create(VirtualMachineType, vm('vm-run', 'Always'));
    const running = await eventually('VM Running', printableStatus('vm-run', 'Running'));
    expect(running.status?.ready).toBe(true);
  });

  it('stops it when runStrategy becomes Halted, and runs it again on Always', async () => {
    const created = await store.create(VirtualMachineType, vm('vm-cycle', 'Always'));
    await eventually('VM Running', printableStatus('vm-cycle', 'Running'));
    const current = await store.get(VirtualMachineType, namespace, 'vm-cycle');
    await store.replace(VirtualMachineType, {
      ...created,
      ...current,
      spec: { ...created.spec, runStrategy: 'Halted' },
    });
    const stopped = await eventually('VM Stopped', printableStatus('vm-cycle', 'Stopped'));
    expect(stopped.status?.ready).toBe(false);
    await store.replace(VirtualMachineType, { ...stopped, spec: { ...stopped.spec, runStrategy: 'Always' } });
    await eventually('VM Running again', printableStatus('vm-cycle', 'Running'));
  });

  it('fails a VirtualMachine labelled for failure with that printableStatus', async () => {
    await store.create(VirtualMachineType, vm('vm-broken', 'Always', { agentry_fail: 'ErrorUnschedulable' }));
    const failed = await eventually('VM failed', printableStatus('vm-broken', 'ErrorUnschedulable'));
    expect(failed.status?.ready).toBe(false);
  });
});
