import { describe, expect, it } from '@jest/globals';
import { agentComputerStatus } from '../../api/agent-computer/present.js';
import { AgentComputerReasons, AgentComputerSpecSchema } from '../../crds/index.js';
import type { AgentComputer } from '../../crds/index.js';
import { computeAgentComputerStatus, runtimeNotEnabledStatus } from '../../operator/agent-computer/status.js';
import { ObservationReasons } from '../../operator/runtimes/types.js';
import type { WorkloadObservation } from '../../operator/runtimes/types.js';

const NOW = new Date('2026-01-01T00:00:00Z');

const kubevirtBox = (): AgentComputer => ({
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'AgentComputer',
  metadata: { name: 'vm-box', namespace: 'n', generation: 1 },
  spec: AgentComputerSpecSchema.parse({ runtime: 'kubevirt' }),
});

describe('an AgentComputer on a runtime the operator does not run', () => {
  it('is error, naming the runtime and what to enable (regression: provisioning for ever)', () => {
    const ac = kubevirtBox();
    const status = runtimeNotEnabledStatus(ac, 'kubevirt', ['process'], NOW);
    expect(agentComputerStatus({ ...ac, status })).toBe('error');
    expect(status.provisionError).toMatch(/kubevirt is not enabled.*runs: process.*AGENTRY_RUNTIMES/);
    expect(status.conditions?.find((c) => c.type === 'Provisioned')).toMatchObject({
      status: 'False',
      reason: AgentComputerReasons.RuntimeNotEnabled,
      observedGeneration: 1,
    });
  });

  it('loses the error once a runtime that runs observes it', () => {
    const ac = kubevirtBox();
    const refused = { ...ac, status: runtimeNotEnabledStatus(ac, 'kubevirt', ['process'], NOW) };
    const observed: WorkloadObservation = {
      provisioned: true,
      running: true,
      ready: false,
      reason: ObservationReasons.Starting,
      message: 'starting',
    };
    const next = computeAgentComputerStatus(refused, observed, undefined, NOW);
    expect(next.provisionError).toBeUndefined();
    expect(agentComputerStatus({ ...refused, status: next })).toBe('provisioning');
  });
});
