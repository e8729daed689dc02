// The API server on the Kubernetes store: authentication, reads from informers fed by real watches,
// writes as custom resources, organization isolation — against the real API server.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { apiKeyId, revokeApiKey } from '../../api/auth/api-keys.js';
import { AgentComputerRecordSchema } from '../../api/agent-computer/present.js';
import { AgentComputerType } from '../../crds/index.js';
import { CONTROL_NAMESPACE, call, eventually, startTestApi } from '../support/api-server.js';
import type { TestApi } from '../support/api-server.js';
import { clusterStore } from './support.js';

const store = clusterStore();
const suffix = randomBytes(3).toString('hex');
const [acme, globex] = [`acme-${suffix}`, `globex-${suffix}`];
let api: TestApi;
let acmeKey: string;
let globexKey: string;

beforeAll(async () => {
  api = await startTestApi({ store, createNamespaces: true });
  acmeKey = await api.key({ org: acme });
  globexKey = await api.key({ org: globex });
});
afterAll(async () => {
  await api.stop();
});

describe('the API server on a real kube-apiserver', () => {
  it('creates an agent computer as an AgentComputer resource in the organization namespace', async () => {
    const res = await call(api, '/v1/agent-computers', {
      key: acmeKey,
      method: 'POST',
      body: { name: 'k8s box' },
    });
    expect(res.status).toBe(201);
    const record = AgentComputerRecordSchema.parse(await res.json());
    const stored = await store.get(AgentComputerType, `agentry-org-${acme}`, record.id);
    expect(stored?.spec.displayName).toBe('k8s box');
  });

  it('serves a resource applied with kubectl-like writes through its watch-fed cache', async () => {
    const id = '0b6f1c9e-5d7a-4f3e-9a51-3c2d1e0f9a8b';
    await store.create(AgentComputerType, {
      apiVersion: 'agentry.dev/v1alpha1',
      kind: 'AgentComputer',
      metadata: { name: id, namespace: `agentry-org-${acme}` },
      spec: { displayName: 'GitOps box', operatingMode: 'Running', idleTimeout: '15m', ephemeral: false },
    });
    await eventually(
      async () => (await call(api, `/v1/agent-computers/${id}`, { key: acmeKey })).status === 200,
    );
  });

  it("answers 404 for another organization's agent computer", async () => {
    const res = await call(api, '/v1/agent-computers', { key: globexKey, method: 'POST', body: {} });
    const theirs = AgentComputerRecordSchema.parse(await res.json());
    expect((await call(api, `/v1/agent-computers/${theirs.id}`, { key: acmeKey })).status).toBe(404);
  });

  it('rejects a key revoked by deleting its Secret', async () => {
    const doomed = await api.key({ org: acme, user: 'temp' });
    expect((await call(api, '/v1/agent-computers', { key: doomed })).status).toBe(200);
    await revokeApiKey(store, CONTROL_NAMESPACE, apiKeyId(doomed));
    await eventually(async () => (await call(api, '/v1/agent-computers', { key: doomed })).status === 401);
  });
});
