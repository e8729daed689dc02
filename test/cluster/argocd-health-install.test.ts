// The chart's argocd-cm patch (charts/agentry/argocd/) does what docs/install.md says: patched into
// an existing argocd-cm with kubectl, it adds every kind's health check and keeps the other keys.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { NamespaceType } from '../../crds/index.js';
import { CHART_COPIES, healthCustomizations } from '../../scripts/argocd-health.js';
import { clusterStore, createTestNamespace, kubectl } from './support.js';

const store = clusterStore();
let namespace: string;

beforeAll(async () => {
  namespace = await createTestNamespace(store, 'argocd');
  await kubectl([
    '-n',
    namespace,
    'create',
    'configmap',
    'argocd-cm',
    '--from-literal=url=https://argocd.test',
  ]);
});

afterAll(async () => {
  await store.delete(NamespaceType, undefined, namespace).catch(() => undefined);
  await store.close();
});

describe('the argocd-cm patch', () => {
  it("adds each kind's Lua health check to argocd-cm and keeps its other settings", async () => {
    await kubectl([
      '-n',
      namespace,
      'patch',
      'configmap',
      'argocd-cm',
      '--patch-file',
      CHART_COPIES.argocdCmPatch,
    ]);
    const configMap = z
      .object({ data: z.record(z.string(), z.string()) })
      .parse(JSON.parse(await kubectl(['-n', namespace, 'get', 'configmap', 'argocd-cm', '-o', 'json'])));
    expect(configMap.data).toEqual({ url: 'https://argocd.test', ...(await healthCustomizations()) });
  });
});
