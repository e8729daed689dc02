import { describe, expect, it } from '@jest/globals';
import { workspaceEgressOf } from '../../cli/operator.js';
import { API_SERVER_APPS, apiServerPods } from '../../operator/runtimes/network-policy.js';
import { loadConfig } from '../../platform/config.js';

const BASE = {
  AGENTRY_EGRESS_PROXY_URL: 'http://agentry-egress.agentry-system.svc:3128',
  AGENTRY_NAMESPACE: 'agentry-system',
};

describe("the operator's workspace egress", () => {
  it('allows the API pods whenever workspaces know the API server, with the model gateway disabled too (the lake client)', () => {
    for (const gateway of ['enabled', 'disabled']) {
      const egress = workspaceEgressOf(
        loadConfig({
          ...BASE,
          AGENTRY_INTERNAL_URL: 'http://agentry-api.agentry-system.svc:8080',
          AGENTRY_MODEL_GATEWAY: gateway,
        }),
      );
      expect(egress?.controlPlane).toContainEqual(apiServerPods('agentry-system'));
    }
  });

  it('allows no API pods when workspaces do not know the API server', () => {
    const targets = workspaceEgressOf(loadConfig(BASE))?.controlPlane ?? [];
    expect(targets.map((target) => target.apps)).not.toContainEqual(API_SERVER_APPS);
    expect(targets).toHaveLength(1); // the egress proxy alone
  });
});
