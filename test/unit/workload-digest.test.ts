// The digest of what a workspace's workload is made from (crds/agent-computer/workload-digest.ts).
import { describe, expect, it } from '@jest/globals';
import { AgentComputerSpecSchema, NON_WORKLOAD_SPEC_FIELDS, workloadDigest } from '../../crds/index.js';
import type { AgentComputerSpec } from '../../crds/index.js';

const base: AgentComputerSpec = AgentComputerSpecSchema.parse({
  runtime: 'pod',
  resources: { cpu: '1', memory: '2Gi', disk: '10Gi' },
});

/** A change of each spec field, valid for the schema. */
const changes: { [K in keyof Required<AgentComputerSpec>]: AgentComputerSpec[K] } = {
  displayName: 'Other',
  icon: '🐙',
  owner: 'ada',
  runtime: 'process',
  operatingMode: 'Hibernated',
  resources: { cpu: '2', memory: '2Gi', disk: '10Gi' },
  idleTimeout: '1h',
  ephemeral: true,
  restartedAt: '2030-01-01T00:00:00Z',
  agentInstructions: 'Be brief.',
  envNames: ['TOKEN'],
  previews: [],
  egress: { allow: [{ host: 'example.com' }] },
};

describe('the workload digest of a spec', () => {
  it('is the same whatever order the keys were written in', () => {
    const reordered = AgentComputerSpecSchema.parse({
      resources: { disk: '10Gi', memory: '2Gi', cpu: '1' },
      runtime: 'pod',
    });
    expect(workloadDigest(reordered)).toBe(workloadDigest(base));
  });

  it.each(NON_WORKLOAD_SPEC_FIELDS.map((field) => [field]))('ignores a change of %s', (field) => {
    expect(workloadDigest({ ...base, [field]: changes[field] })).toBe(workloadDigest(base));
  });

  const workloadFields = (Object.keys(changes) as (keyof AgentComputerSpec)[]).filter(
    (field) => !(NON_WORKLOAD_SPEC_FIELDS as readonly string[]).includes(field),
  );
  it.each(workloadFields.map((field) => [field]))('changes with %s', (field) => {
    expect(workloadDigest({ ...base, [field]: changes[field] })).not.toBe(workloadDigest(base));
  });
});
