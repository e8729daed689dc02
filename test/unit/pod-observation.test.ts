import { describe, expect, it } from '@jest/globals';
import { observePod } from '../../operator/runtimes/pod-status.js';
import type { Pod } from '../../operator/runtimes/kube-objects.js';

const ENDPOINT = 'http://ac-1-runner.agentry-org-acme.svc:8700';
const context = { tokenSecretName: 'ac-1-runner-token', token: 't' };

const pod = (status: Pod['status']): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'ac-1-runner-0', namespace: 'agentry-org-acme' },
  spec: { containers: [{ name: 'runner' }] },
  status,
});

describe("a pod's observation", () => {
  it("carries the pod's IP as the workload's address, beside its Service endpoint", () => {
    const seen = observePod(
      pod({ phase: 'Running', podIP: '10.244.0.7', conditions: [{ type: 'Ready', status: 'True' }] }),
      ENDPOINT,
      context,
    );
    expect([seen.ready, seen.endpoint, seen.address]).toEqual([true, ENDPOINT, '10.244.0.7']);
  });

  it('has no address before the pod has an IP', () => {
    expect(observePod(pod({ phase: 'Pending' }), ENDPOINT, context).address).toBeUndefined();
  });
});
