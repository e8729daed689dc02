// Where previews reach a VM workspace's ports (operator/runtimes/vm-observation.ts): the address
// its running instance reports on the pod-network interface, the virt-launcher Pod's IP (masquerade
// binding forwards its ports into the guest). The Service names only the runner's port.
import { describe, expect, it } from '@jest/globals';
import { AgentComputerSpecSchema } from '../../crds/index.js';
import type { AgentComputer } from '../../crds/index.js';
import type { VirtualMachine, VirtualMachineInstance } from '../../operator/runtimes/kube-objects.js';
import { observeVm, vmAddress } from '../../operator/runtimes/vm-observation.js';

type Interfaces = NonNullable<NonNullable<VirtualMachineInstance['status']>['interfaces']>;

const instance = (interfaces: Interfaces): VirtualMachineInstance => ({
  apiVersion: 'kubevirt.io/v1',
  kind: 'VirtualMachineInstance',
  metadata: { name: 'ws', namespace: 'org' },
  spec: {},
  status: { phase: 'Running', interfaces },
});

const running: AgentComputer = {
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'AgentComputer',
  metadata: { name: 'ws', namespace: 'org', uid: 'uid-1', generation: 1 },
  spec: AgentComputerSpecSchema.parse({ runtime: 'kubevirt' }),
};

const vm = (printableStatus: string): VirtualMachine => ({
  apiVersion: 'kubevirt.io/v1',
  kind: 'VirtualMachine',
  metadata: { name: 'ws', namespace: 'org' },
  spec: { runStrategy: 'Always' },
  status: { printableStatus, ready: printableStatus === 'Running' },
});

const where = {
  endpoint: 'http://ws-runner.org.svc:8700',
  image: 'disk:1',
  disk: 'ws-disk',
  address: '10.244.0.17',
};

describe('a VM workspace address', () => {
  it('is the IP its instance reports on the default interface', () => {
    const reported = instance([
      { name: 'secondary', ipAddress: '192.168.7.2' },
      { name: 'default', ipAddress: '10.244.0.17', ipAddresses: ['10.244.0.17', 'fd00::17'] },
    ]);
    expect(vmAddress(reported)).toBe('10.244.0.17');
  });

  it('falls back to the first IP any interface reports', () => {
    expect(vmAddress(instance([{ name: 'default' }, { name: 'other', ipAddresses: ['10.1.2.3'] }]))).toBe(
      '10.1.2.3',
    );
  });

  it('is unknown before the instance reports one, and without an instance', () => {
    expect(vmAddress(instance([{ name: 'default' }]))).toBeUndefined();
    expect(vmAddress(undefined)).toBeUndefined();
  });

  it('is what a running VM is observed with', () => {
    expect(observeVm(running, vm('Running'), where).address).toBe('10.244.0.17');
  });

  it('is dropped once the VM no longer runs (its next instance gets another IP)', () => {
    expect(observeVm(running, vm('Stopped'), where).address).toBeUndefined();
  });
});
