// When a hibernating VM counts as down (operator/runtimes/vm-observation.ts observeVm): KubeVirt reports
// Stopping at once after runStrategy Halted, while the guest still shuts down and holds its CPU and
// memory; the workspace is hibernated only once KubeVirt says Stopped. Found on real KubeVirt, where
// the API said `hibernated` 0.5 s after a stop and the VM instance lived 7 s longer.
import { describe, expect, it } from '@jest/globals';
import { AgentComputerSpecSchema } from '../../crds/index.js';
import type { AgentComputer } from '../../crds/index.js';
import type { VirtualMachine } from '../../operator/runtimes/kube-objects.js';
import { observeVm } from '../../operator/runtimes/vm-observation.js';

const hibernating: AgentComputer = {
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'AgentComputer',
  metadata: { name: 'ws', namespace: 'org', uid: 'uid-1', generation: 2 },
  spec: AgentComputerSpecSchema.parse({ runtime: 'kubevirt', operatingMode: 'Hibernated' }),
};

function vm(printableStatus: string | undefined): VirtualMachine {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name: 'ws', namespace: 'org' },
    spec: { runStrategy: 'Halted' },
    ...(printableStatus === undefined ? {} : { status: { printableStatus } }),
  };
}

const where = { endpoint: 'http://ws-runner.org.svc:8700', image: 'disk:1', disk: 'ws-disk' };

describe('a hibernating VM', () => {
  it('is still running while KubeVirt reports it Stopping', () => {
    const observed = observeVm(hibernating, vm('Stopping'), where);
    expect(observed.running).toBe(true);
    expect(observed.reason).toBe('Hibernating');
  });

  it('is down once KubeVirt reports it Stopped', () => {
    const observed = observeVm(hibernating, vm('Stopped'), where);
    expect(observed.running).toBe(false);
    expect(observed.reason).toBe('Hibernated');
  });

  it('is down when KubeVirt has not reported on it yet (never started)', () => {
    expect(observeVm(hibernating, vm(undefined), where).running).toBe(false);
  });
});
