import { describe, expect, it } from '@jest/globals';
import { agentComputerStatus } from '../../api/agent-computer/present.js';
import type { AgentComputerStatusValue } from '../../api/agent-computer/present.js';
import { AgentComputerSpecSchema } from '../../crds/index.js';
import type { AgentComputer, AgentComputerStatus, Condition } from '../../crds/index.js';

const condition = (type: string, status: Condition['status'], observedGeneration = 1): Condition => ({
  type,
  status,
  observedGeneration,
  lastTransitionTime: '2026-01-01T00:00:00Z',
  reason: 'Test',
  message: '',
});

const computer = (
  mode: 'Running' | 'Hibernated',
  status: AgentComputerStatus | undefined,
  generation = 1,
): AgentComputer => ({
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'AgentComputer',
  metadata: { name: 'a', namespace: 'n', generation },
  spec: AgentComputerSpecSchema.parse({ operatingMode: mode }),
  status,
});

// Table of numbered cases, as in agent-sandbox: intent × conditions → REST status.
const cases: [number, AgentComputer, AgentComputerStatusValue][] = [
  [1, computer('Running', undefined), 'provisioning'],
  [2, computer('Running', { conditions: [condition('Ready', 'False')] }), 'provisioning'],
  [3, computer('Running', { conditions: [condition('Ready', 'True')] }), 'ready'],
  [4, computer('Running', { conditions: [condition('Ready', 'True', 1)] }, 2), 'provisioning'],
  [
    5,
    computer('Running', {
      provisionError: 'ErrImagePull: no such image',
      conditions: [condition('Ready', 'True')],
    }),
    'error',
  ],
  [
    6,
    computer('Hibernated', { conditions: [condition('Hibernated', 'True'), condition('Ready', 'False')] }),
    'hibernated',
  ],
  // Regression: a stop answered `provisioning` while the workspace still ran.
  [7, computer('Hibernated', { conditions: [condition('Ready', 'True', 1)] }, 2), 'ready'],
  [
    8,
    computer('Running', { conditions: [condition('Hibernated', 'True'), condition('Ready', 'False')] }),
    'provisioning',
  ],
  [9, computer('Hibernated', { conditions: [condition('Ready', 'False')] }), 'provisioning'],
];

describe('agentComputerStatus', () => {
  it.each(cases)('case %i derives the REST status', (_n, ac, expected) => {
    expect(agentComputerStatus(ac)).toBe(expected);
  });
});
