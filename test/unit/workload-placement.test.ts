import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '../../platform/config.js';
import { parseEgressAllowance } from '../../platform/workload-placement.js';
import { placementFields } from '../../operator/runtimes/cluster-options.js';
import { egressWith, runnerNetworkPolicy } from '../../operator/runtimes/network-policy.js';

const policyOptions = {
  name: 'box-runner',
  namespace: 'agentry-org-acme',
  labels: { 'app.kubernetes.io/name': 'agentry-runner' },
  ownerReferences: [],
  controlNamespace: 'agentry-system',
  port: 8700,
};

describe('workload placement settings', () => {
  it('parses the node selector and tolerations from JSON', () => {
    const config = loadConfig({
      AGENTRY_WORKLOAD_NODE_SELECTOR: '{"pool":"agents"}',
      AGENTRY_WORKLOAD_TOLERATIONS: '[{"key":"agents","operator":"Exists","effect":"NoSchedule"}]',
    });
    expect(config.AGENTRY_WORKLOAD_NODE_SELECTOR).toEqual({ pool: 'agents' });
    expect(config.AGENTRY_WORKLOAD_TOLERATIONS).toEqual([
      { key: 'agents', operator: 'Exists', effect: 'NoSchedule' },
    ]);
  });

  it('defaults to no selector, no tolerations and no extra egress', () => {
    const config = loadConfig({});
    expect(config.AGENTRY_WORKLOAD_NODE_SELECTOR).toEqual({});
    expect(config.AGENTRY_WORKLOAD_TOLERATIONS).toEqual([]);
    expect(config.AGENTRY_WORKLOAD_EGRESS_ALLOW).toEqual([]);
  });

  it('stops start-up on a selector that is not JSON, naming the setting', () => {
    expect(() => loadConfig({ AGENTRY_WORKLOAD_NODE_SELECTOR: 'pool=agents' })).toThrow(
      /AGENTRY_WORKLOAD_NODE_SELECTOR: must be JSON/,
    );
  });

  it('stops start-up on a toleration with an unknown effect or field', () => {
    expect(() => loadConfig({ AGENTRY_WORKLOAD_TOLERATIONS: '[{"effect":"Never"}]' })).toThrow(ConfigError);
    expect(() => loadConfig({ AGENTRY_WORKLOAD_TOLERATIONS: '[{"keys":"a"}]' })).toThrow(ConfigError);
  });

  it('reads extra egress as CIDR with an optional port', () => {
    expect(loadConfig({ AGENTRY_WORKLOAD_EGRESS_ALLOW: '10.250.0.1/32:9000, 10.96.0.0/12' })).toMatchObject({
      AGENTRY_WORKLOAD_EGRESS_ALLOW: [{ cidr: '10.250.0.1/32', port: 9000 }, { cidr: '10.96.0.0/12' }],
    });
  });

  it.each(['10.0.0.1', '10.0.0.1/33', '300.0.0.1/32', '10.0.0.1/32:0', '10.0.0.1/32:70000', 'host:80'])(
    'refuses the egress entry %s',
    (entry) => {
      expect(parseEgressAllowance(entry)).toBeUndefined();
      expect(() => loadConfig({ AGENTRY_WORKLOAD_EGRESS_ALLOW: entry })).toThrow(ConfigError);
    },
  );
});

describe('placementFields', () => {
  it('adds nothing when unset or empty, so existing pod templates keep their hash', () => {
    expect(placementFields(undefined)).toEqual({});
    expect(placementFields({ nodeSelector: {}, tolerations: [] })).toEqual({});
  });

  it('adds the selector and tolerations when set', () => {
    expect(
      placementFields({
        nodeSelector: { pool: 'agents' },
        tolerations: [{ key: 'agents', operator: 'Exists' }],
      }),
    ).toEqual({ nodeSelector: { pool: 'agents' }, tolerations: [{ key: 'agents', operator: 'Exists' }] });
  });
});

describe('egressWith', () => {
  it('keeps the default rules and adds each allowance as its own rule, port-limited when a port is given', () => {
    const policy = runnerNetworkPolicy({
      ...policyOptions,
      egress: egressWith([{ cidr: '10.250.0.1/32', port: 9000 }, { cidr: '10.96.0.0/12' }]),
    });
    const defaults = runnerNetworkPolicy(policyOptions).spec.egress ?? [];
    expect(policy.spec.egress).toEqual([
      defaults[0],
      { to: [{ ipBlock: { cidr: '10.250.0.1/32' } }], ports: [{ protocol: 'TCP', port: 9000 }] },
      { to: [{ ipBlock: { cidr: '10.96.0.0/12' } }] },
      defaults[1],
    ]);
  });
});
