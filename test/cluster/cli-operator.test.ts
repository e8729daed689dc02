// `agentry operator` as a real process against the real API server: it converges organizations,
// serves health and metrics, and stops cleanly on SIGTERM without logging an error.
import { afterAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import {
  LeaseType,
  NamespaceType,
  OrganizationSpecSchema,
  OrganizationType,
  apiVersionOf,
} from '../../crds/index.js';
import { ensureNamespace } from '../../cli/bootstrap.js';
import { collectOutput, errorLogLines, spawnAgentry, stopChild } from '../support/spawn-cli.js';
import { freeLoopbackPort } from '../support/free-port.js';
import { clusterStore, eventually, testCluster } from './support.js';

const store = clusterStore();
afterAll(async () => {
  await store.close();
});

describe('agentry operator', () => {
  it('takes the lease, makes an organization its namespace, serves metrics and stops on SIGTERM', async () => {
    const control = `operator-${randomBytes(3).toString('hex')}`;
    const org = `op-${randomBytes(3).toString('hex')}`;
    await ensureNamespace(store, control);
    const port = await freeLoopbackPort();
    const child = spawnAgentry(['operator'], {
      AGENTRY_STORE: 'kubernetes',
      KUBECONFIG: testCluster().kubeconfig,
      AGENTRY_NAMESPACE: control,
      AGENTRY_METRICS_PORT: String(port),
      AGENTRY_LOG_LEVEL: 'warn',
    });
    const output = collectOutput(child);
    try {
      await store.create(OrganizationType, {
        apiVersion: apiVersionOf(OrganizationType),
        kind: 'Organization',
        metadata: { name: org },
        spec: OrganizationSpecSchema.parse({ displayName: org }),
      });
      const namespace = await eventually(
        'org namespace',
        () => store.get(NamespaceType, undefined, `agentry-org-${org}`),
        60_000,
      );
      expect(namespace.metadata.labels).toMatchObject({ 'agentry.dev/organization': org });
      const lease = await store.get(LeaseType, control, 'agentry-operator');
      expect(lease?.spec?.holderIdentity).toEqual(expect.any(String));
      // The namespace appears mid-reconcile; the duration is observed when the reconcile returns.
      const pattern = /agentry_reconcile_duration_seconds_count\{controller="organization"/;
      const metrics = await eventually('reconcile metrics', () =>
        fetch(`http://127.0.0.1:${port}/metrics`).then(
          async (res) => {
            const text = await res.text();
            return pattern.test(text) ? text : undefined;
          },
          () => undefined,
        ),
      );
      expect(metrics).toMatch(/agentry_reconcile_duration_seconds_count\{controller="organization"/);
    } finally {
      expect(await stopChild(child)).toBe(0);
    }
    // A converging operator logs nothing at error level (the stream is drained all along).
    const { stdout, stderr } = output();
    expect(errorLogLines(stdout + stderr)).toEqual([]);
  }, 120_000);
});
