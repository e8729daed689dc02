// Which egress a workload's NetworkPolicy gets: workspaces go through the proxy when one is
// configured; context-lake servers keep the IP-range egress (they read S3 and https datasets).
import { describe, expect, it } from '@jest/globals';
import { ContextLakeSpecSchema } from '../../crds/index.js';
import type { ContextLake } from '../../crds/index.js';
import { workloadNetworkPolicy } from '../../operator/runtimes/cluster-objects.js';
import { DEFAULT_EGRESS, egressThroughProxy } from '../../operator/runtimes/network-policy.js';
import { agentComputerObject } from '../support/workspace-objects.js';

const owner = { apiVersion: 'agentry.dev/v1alpha1', kind: 'X', name: 'x', uid: 'u', controller: true };
const throughProxy = egressThroughProxy('agentry-system', 3128, []);
const lake: ContextLake = {
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'ContextLake',
  metadata: { name: 'lake', namespace: 'agentry-org-acme' },
  spec: ContextLakeSpecSchema.parse({ config: { name: 'lake' }, operatingMode: 'Running' }),
};

describe('workload egress', () => {
  it("gives a workspace the proxy's egress when the installation runs the proxy", () => {
    const policy = workloadNetworkPolicy(agentComputerObject('agentry-org-acme', 'box'), owner, 'box', {
      controlNamespace: 'agentry-system',
      egress: DEFAULT_EGRESS,
      workspaceEgress: throughProxy,
    });
    expect(JSON.stringify(policy.spec.egress)).toContain('agentry-egress');
    expect(JSON.stringify(policy.spec.egress)).not.toContain('0.0.0.0/0');
  });

  it('keeps the IP-range egress of a context lake, proxy or not', () => {
    const policy = workloadNetworkPolicy(lake, owner, 'lake', {
      controlNamespace: 'agentry-system',
      egress: DEFAULT_EGRESS,
      workspaceEgress: throughProxy,
    });
    expect(JSON.stringify(policy.spec.egress)).toContain('0.0.0.0/0');
    expect(JSON.stringify(policy.spec.egress)).not.toContain('agentry-egress');
  });

  it('gives a workspace the IP-range egress without a proxy', () => {
    const policy = workloadNetworkPolicy(agentComputerObject('agentry-org-acme', 'box'), owner, 'box', {
      controlNamespace: 'agentry-system',
      egress: DEFAULT_EGRESS,
    });
    expect(JSON.stringify(policy.spec.egress)).toContain('0.0.0.0/0');
  });
});
