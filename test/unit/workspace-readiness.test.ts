// When the operator may send prompts to a workspace's runner (operator/task/workspace-readiness.ts).
import { describe, expect, it } from '@jest/globals';
import {
  AgentComputerSpecSchema,
  AgentComputerType,
  POOL_CLAIMED_GENERATION_ANNOTATION,
  apiVersionOf,
} from '../../crds/index.js';
import type { AgentComputer } from '../../crds/index.js';
import { readyForPrompts } from '../../operator/task/workspace-readiness.js';

const workspace = (input: {
  generation: number;
  ready: 'True' | 'False';
  observed: number;
  claimedGeneration?: string;
}): AgentComputer => ({
  apiVersion: apiVersionOf(AgentComputerType),
  kind: AgentComputerType.kind,
  metadata: {
    name: 'ws',
    namespace: 'agentry-org-acme',
    generation: input.generation,
    ...(input.claimedGeneration === undefined
      ? {}
      : { annotations: { [POOL_CLAIMED_GENERATION_ANNOTATION]: input.claimedGeneration } }),
  },
  spec: AgentComputerSpecSchema.parse({}),
  status: {
    conditions: [
      {
        type: 'Ready',
        status: input.ready,
        observedGeneration: input.observed,
        lastTransitionTime: '2030-01-01T00:00:00Z',
        reason: 'RunnerReady',
        message: '',
      },
    ],
  },
});

describe('a workspace ready for prompts', () => {
  it.each([
    ['1: Ready for the current generation', { generation: 3, ready: 'True', observed: 3 }, true],
    ['2: Ready for an older generation, no claim', { generation: 3, ready: 'True', observed: 2 }, false],
    ['3: not Ready for the current generation', { generation: 3, ready: 'False', observed: 3 }, false],
    [
      '4: just claimed, Ready for the generation before the claim',
      { generation: 3, ready: 'True', observed: 2, claimedGeneration: '3' },
      true,
    ],
    [
      '5: changed again after the claim',
      { generation: 4, ready: 'True', observed: 2, claimedGeneration: '3' },
      false,
    ],
    [
      '6: claimed while its readiness was two generations old',
      { generation: 3, ready: 'True', observed: 1, claimedGeneration: '3' },
      false,
    ],
    [
      '7: just claimed, not Ready before the claim',
      { generation: 3, ready: 'False', observed: 2, claimedGeneration: '3' },
      false,
    ],
    [
      '8: a malformed claim annotation',
      { generation: 3, ready: 'True', observed: 2, claimedGeneration: 'three' },
      false,
    ],
  ] as const)('%s', (_name, input, expected) => {
    expect(readyForPrompts(workspace(input))).toBe(expected);
  });
});
