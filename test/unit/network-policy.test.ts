import { describe, expect, it } from '@jest/globals';
import { loadConfig } from '../../platform/config.js';
import {
  EGRESS_PROXY_APP,
  apiServerPods,
  egressThroughProxy,
  egressWith,
  runnerNetworkPolicy,
} from '../../operator/runtimes/network-policy.js';
import type { RunnerNetworkPolicyOptions } from '../../operator/runtimes/network-policy.js';

const labels = { 'app.kubernetes.io/name': 'agentry-runner', 'agentry.dev/agent-computer': 'box' };
const owner = {
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'AgentComputer',
  name: 'box',
  uid: 'u-1',
  controller: true,
};
const options: RunnerNetworkPolicyOptions = {
  name: 'box-runner',
  namespace: 'agentry-org-acme',
  labels,
  ownerReferences: [owner],
  controlNamespace: 'agentry-system',
  port: 8700,
};

describe('runnerNetworkPolicy', () => {
  it('selects the workload pods by their labels and carries them and the owner itself', () => {
    const policy = runnerNetworkPolicy(options);
    expect(policy.spec.podSelector).toEqual({ matchLabels: labels });
    expect(policy.metadata).toEqual({
      name: 'box-runner',
      namespace: 'agentry-org-acme',
      labels,
      ownerReferences: [owner],
    });
  });

  it('governs both directions, so traffic no rule names is denied', () => {
    expect(runnerNetworkPolicy(options).spec.policyTypes).toEqual(['Ingress', 'Egress']);
  });

  it('admits only the API server and operator pods of the control-plane namespace, on the runner port', () => {
    expect(runnerNetworkPolicy(options).spec.ingress).toEqual([
      {
        from: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'agentry-system' } },
            podSelector: {
              matchExpressions: [
                {
                  key: 'app.kubernetes.io/name',
                  operator: 'In',
                  values: ['agentry-api', 'agentry-operator'],
                },
              ],
            },
          },
        ],
        ports: [{ protocol: 'TCP', port: 8700 }],
      },
    ]);
  });

  it("opens a workspace's other ports to the API server's pods alone (the preview proxy)", () => {
    expect(runnerNetworkPolicy({ ...options, previewPorts: true }).spec.ingress?.[1]).toEqual({
      from: [
        {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'agentry-system' } },
          podSelector: {
            matchExpressions: [{ key: 'app.kubernetes.io/name', operator: 'In', values: ['agentry-api'] }],
          },
        },
      ],
    });
  });

  it('lets the workload reach the IPv4 internet except private, metadata and carrier-grade NAT ranges', () => {
    expect(runnerNetworkPolicy(options).spec.egress?.[0]).toEqual({
      to: [
        {
          ipBlock: {
            cidr: '0.0.0.0/0',
            except: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '100.64.0.0/10'],
          },
        },
      ],
    });
  });

  it('allows DNS to kube-system over UDP and TCP by default', () => {
    expect(runnerNetworkPolicy(options).spec.egress?.[1]).toEqual({
      to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } } }],
      ports: [
        { protocol: 'UDP', port: 53 },
        { protocol: 'TCP', port: 53 },
      ],
    });
  });

  it('takes the egress ranges from the options', () => {
    const policy = runnerNetworkPolicy({
      ...options,
      egress: { allow: [{ cidr: '203.0.113.0/24' }, { cidr: '::/0', except: ['fc00::/7'] }], dns: false },
    });
    expect(policy.spec.egress).toEqual([
      { to: [{ ipBlock: { cidr: '203.0.113.0/24' } }] },
      { to: [{ ipBlock: { cidr: '::/0', except: ['fc00::/7'] } }] },
    ]);
  });

  it('leaves out the egress rules when nothing is allowed, which denies all egress', () => {
    const policy = runnerNetworkPolicy({ ...options, egress: { allow: [], dns: false } });
    expect(policy.spec).not.toHaveProperty('egress');
    expect(policy.spec.policyTypes).toContain('Egress');
  });

  it("lets workspaces reach the API server's pods on the API port alone when the model gateway is on", () => {
    const policy = runnerNetworkPolicy({
      ...options,
      egress: { allow: [], dns: false, controlPlane: [apiServerPods('agentry-system')] },
    });
    expect(policy.spec.egress).toEqual([
      {
        to: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'agentry-system' } },
            podSelector: {
              matchExpressions: [{ key: 'app.kubernetes.io/name', operator: 'In', values: ['agentry-api'] }],
            },
          },
        ],
        ports: [{ protocol: 'TCP', port: 'http' }],
      },
    ]);
  });
});

describe('egressThroughProxy', () => {
  const policy = runnerNetworkPolicy({
    ...options,
    egress: egressThroughProxy('agentry-system', 3128, [{ cidr: '10.250.1.1/32', port: 9000 }]),
  });

  it('allows only the installation exceptions, the egress proxy pods on its port and DNS', () => {
    expect(policy.spec.egress).toEqual([
      { to: [{ ipBlock: { cidr: '10.250.1.1/32' } }], ports: [{ protocol: 'TCP', port: 9000 }] },
      {
        to: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'agentry-system' } },
            podSelector: {
              matchExpressions: [
                { key: 'app.kubernetes.io/name', operator: 'In', values: [EGRESS_PROXY_APP] },
              ],
            },
          },
        ],
        ports: [{ protocol: 'TCP', port: 3128 }],
      },
      {
        to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } } }],
        ports: [
          { protocol: 'UDP', port: 53 },
          { protocol: 'TCP', port: 53 },
        ],
      },
    ]);
  });

  it('no longer allows the internet by IP range', () => {
    expect(JSON.stringify(policy.spec.egress)).not.toContain('0.0.0.0/0');
  });
});

describe('DNS servers besides kube-system', () => {
  it('adds each resolver as an ipBlock to the DNS rule, UDP and TCP 53 only', () => {
    const policy = runnerNetworkPolicy({ ...options, egress: egressWith([], ['169.254.20.10/32']) });
    expect(policy.spec.egress?.at(-1)).toEqual({
      to: [
        { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } } },
        { ipBlock: { cidr: '169.254.20.10/32' } },
      ],
      ports: [
        { protocol: 'UDP', port: 53 },
        { protocol: 'TCP', port: 53 },
      ],
    });
  });

  it('reads AGENTRY_WORKLOAD_DNS_SERVERS as IPv4 CIDRs and refuses anything else', () => {
    expect(
      loadConfig({ AGENTRY_WORKLOAD_DNS_SERVERS: '10.250.0.1/32, 169.254.20.10/32' })
        .AGENTRY_WORKLOAD_DNS_SERVERS,
    ).toEqual(['10.250.0.1/32', '169.254.20.10/32']);
    expect(() => loadConfig({ AGENTRY_WORKLOAD_DNS_SERVERS: 'dns.example' })).toThrow(/not an IPv4 CIDR/);
  });
});
