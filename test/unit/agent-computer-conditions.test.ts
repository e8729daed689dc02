import { describe, expect, it } from '@jest/globals';
import { agentComputerStatus } from '../../api/agent-computer/present.js';
import { AgentComputerSpecSchema } from '../../crds/index.js';
import type { AgentComputer } from '../../crds/index.js';
import { computeAgentComputerStatus } from '../../operator/agent-computer/status.js';
import { ObservationReasons } from '../../operator/runtimes/types.js';
import type { WorkloadObservation } from '../../operator/runtimes/types.js';

const NOW = new Date('2026-11-22T12:00:00Z');

const ac = (mode: 'Running' | 'Hibernated', annotations: Record<string, string> = {}): AgentComputer => ({
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'AgentComputer',
  metadata: { name: 'a', namespace: 'n', generation: 3, annotations },
  spec: AgentComputerSpecSchema.parse({ operatingMode: mode }),
});

const obs = (partial: Partial<WorkloadObservation>): WorkloadObservation => ({
  provisioned: true,
  running: true,
  ready: true,
  reason: ObservationReasons.RunnerReady,
  message: 'observed',
  ...partial,
});

const conditionsOf = (status: ReturnType<typeof computeAgentComputerStatus>) =>
  Object.fromEntries((status.conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason}`]));

// Numbered cases: intent × observation → conditions, and the REST status the API derives from them.
describe('computeAgentComputerStatus', () => {
  it.each([
    [
      1,
      ac('Running'),
      obs({ provisioned: false, running: false, ready: false }),
      undefined,
      'provisioning',
      { Provisioned: 'False/Provisioning', Ready: 'False/Starting', Hibernated: 'False/Running' },
    ],
    [
      2,
      ac('Running'),
      obs({ ready: false }),
      undefined,
      'provisioning',
      { Provisioned: 'True/Provisioned', Ready: 'False/Starting', Hibernated: 'False/Running' },
    ],
    [
      3,
      ac('Running'),
      obs({}),
      undefined,
      'ready',
      { Provisioned: 'True/Provisioned', Ready: 'True/RunnerReady', Hibernated: 'False/Running' },
    ],
    [
      4,
      ac('Hibernated'),
      obs({ running: true, ready: true }),
      undefined,
      'provisioning',
      { Ready: 'False/Hibernated', Hibernated: 'False/Requested' },
    ],
    [
      5,
      ac('Hibernated'),
      obs({ running: false, ready: false }),
      undefined,
      'hibernated',
      { Ready: 'False/Hibernated', Hibernated: 'True/Requested' },
    ],
    [
      6,
      ac('Hibernated', { 'agentry.dev/hibernated-by': 'idle-timeout' }),
      obs({ running: false, ready: false }),
      undefined,
      'hibernated',
      { Hibernated: 'True/IdleTimeout' },
    ],
    [
      7,
      ac('Running'),
      obs({ running: false, ready: false, provisionError: 'ErrImagePull: image not found' }),
      undefined,
      'error',
      { Provisioned: 'False/ProvisionFailed', Ready: 'False/Failed' },
    ],
    [
      9,
      ac('Running'),
      obs({
        provisioned: false,
        running: false,
        ready: false,
        provisionError: 'install bubblewrap',
        provisionErrorReason: 'IsolationUnavailable',
      }),
      undefined,
      'error',
      { Provisioned: 'False/IsolationUnavailable', Ready: 'False/Failed' },
    ],
    [
      8,
      ac('Running'),
      undefined,
      'runtime pod is not enabled',
      'provisioning',
      { Provisioned: 'False/Provisioning', Ready: 'False/Failed' },
    ],
  ] as const)('case %i', (_n, resource, observation, failure, rest, expected) => {
    const status = computeAgentComputerStatus(resource, observation, failure, NOW);
    expect(conditionsOf(status)).toMatchObject(expected);
    expect(status.conditions?.every((c) => c.observedGeneration === 3)).toBe(true);
    expect(agentComputerStatus({ ...resource, status })).toBe(rest);
  });

  it('keeps lastTransitionTime when a condition keeps its status', () => {
    const first = computeAgentComputerStatus(ac('Running'), obs({}), undefined, NOW);
    const later = computeAgentComputerStatus(
      { ...ac('Running'), status: first },
      obs({}),
      undefined,
      new Date('2026-11-22T13:00:00Z'),
    );
    expect(later.conditions).toEqual(first.conditions);
  });

  it('moves lastTransitionTime when a condition changes status', () => {
    const first = computeAgentComputerStatus(ac('Running'), obs({ ready: false }), undefined, NOW);
    const later = computeAgentComputerStatus(
      { ...ac('Running'), status: first },
      obs({}),
      undefined,
      new Date('2026-11-22T13:00:00Z'),
    );
    expect(later.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime).toBe(
      '2026-11-22T13:00:00Z',
    );
  });
});
