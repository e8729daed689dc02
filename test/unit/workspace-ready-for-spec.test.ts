// When a workspace is ready for its current spec (crds/agent-computer/readiness.ts): what the
// operator dispatches by and the API's REST status and event stream read.
import { describe, expect, it } from '@jest/globals';
import {
  AgentComputerSpecSchema,
  AgentComputerType,
  apiVersionOf,
  readyForCurrentSpec,
  workloadDigest,
} from '../../crds/index.js';
import type { AgentComputer, AgentComputerSpec } from '../../crds/index.js';

const observedSpec: AgentComputerSpec = AgentComputerSpecSchema.parse({ idleTimeout: '0s' });

/** A workspace whose operator last wrote its status at generation 2 for `observedSpec`. */
function workspace(input: {
  generation: number;
  spec?: Partial<AgentComputerSpec>;
  ready?: 'True' | 'False';
  readyObserved?: number;
  observedWorkload?: string | undefined;
}): AgentComputer {
  const readyObserved = input.readyObserved ?? 2;
  return {
    apiVersion: apiVersionOf(AgentComputerType),
    kind: AgentComputerType.kind,
    metadata: { name: 'ws', namespace: 'agentry-org-acme', generation: input.generation },
    spec: { ...observedSpec, ...input.spec },
    status: {
      observedGeneration: 2,
      ...('observedWorkload' in input
        ? input.observedWorkload === undefined
          ? {}
          : { observedWorkload: input.observedWorkload }
        : { observedWorkload: workloadDigest(observedSpec) }),
      conditions: [
        {
          type: 'Ready',
          status: input.ready ?? 'True',
          observedGeneration: readyObserved,
          lastTransitionTime: '2030-01-01T00:00:00Z',
          reason: 'RunnerReady',
          message: '',
        },
      ],
    },
  };
}

describe('a workspace ready for its current spec', () => {
  it('is ready when Ready was observed for the current generation', () => {
    expect(readyForCurrentSpec(workspace({ generation: 2 }))).toBe(true);
  });

  it('is not ready when Ready is False for the current generation', () => {
    expect(readyForCurrentSpec(workspace({ generation: 2, ready: 'False' }))).toBe(false);
  });

  it('stays ready when a later generation changed only non-workload fields (a claim: owner, name, idle timeout)', () => {
    const claimed = workspace({
      generation: 3,
      spec: { owner: 'ada', displayName: 'Mine', idleTimeout: '15m', ephemeral: true, icon: '🐙' },
    });
    expect(readyForCurrentSpec(claimed)).toBe(true);
  });

  it('stays ready across several generations that changed no workload field', () => {
    const renamed = workspace({
      generation: 5,
      spec: { displayName: 'Renamed', agentInstructions: 'Be brief.' },
    });
    expect(readyForCurrentSpec(renamed)).toBe(true);
  });

  it('is not ready when a later generation asked for a restart', () => {
    const restarted = workspace({ generation: 3, spec: { restartedAt: '2030-01-02T00:00:00Z' } });
    expect(readyForCurrentSpec(restarted)).toBe(false);
  });

  it('is not ready when a later generation asked it to hibernate', () => {
    expect(readyForCurrentSpec(workspace({ generation: 3, spec: { operatingMode: 'Hibernated' } }))).toBe(
      false,
    );
  });

  it('is not ready when a later generation changed its resources', () => {
    expect(readyForCurrentSpec(workspace({ generation: 3, spec: { resources: { cpu: '2' } } }))).toBe(false);
  });

  it('is not ready for a later generation when the status names no workload (written by an older operator)', () => {
    expect(readyForCurrentSpec(workspace({ generation: 3, observedWorkload: undefined }))).toBe(false);
  });

  it('is not ready for a later generation when Ready is older than the status write that named the workload', () => {
    expect(readyForCurrentSpec(workspace({ generation: 3, readyObserved: 1 }))).toBe(false);
  });

  it('is not ready for a later generation when Ready was False', () => {
    expect(readyForCurrentSpec(workspace({ generation: 3, ready: 'False' }))).toBe(false);
  });
});
