// The embedded default end to end: API server, operator and real runner processes on one machine.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentComputerRecordSchema } from '../../api/agent-computer/present.js';
import type { AgentComputerRecord } from '../../api/agent-computer/present.js';
import { AgentComputerType, EventType, SecretType, secretValue } from '../../crds/index.js';
import type { AgentComputer } from '../../crds/index.js';
import type { RunningOperator } from '../../operator/operator.js';
import type { ProcessRuntime } from '../../operator/runtimes/process.js';
import { readRunnerRecord, workspacePaths } from '../../operator/runtimes/process/workspace.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { call, startTestApi } from '../support/api-server.js';
import type { TestApi } from '../support/api-server.js';
import { startProcessOperator } from '../support/process-operator.js';

const READY_MS = 60_000;

let dir: string;
let api: TestApi;
let operator: RunningOperator;
let runtime: ProcessRuntime;
let key: string;
const namespace = 'agentry-org-acme';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-embedded-op-'));
  const store = await EmbeddedStore.open(join(dir, 'store'));
  ({ operator, runtime } = await startProcessOperator(store, dir));
  api = await startTestApi({ store });
  key = await api.key({ org: 'acme' });
}, 60_000);

afterAll(async () => {
  const { items } = await api.store.list(AgentComputerType);
  await Promise.all(
    items.map((ac) => api.store.delete(AgentComputerType, ac.metadata.namespace, ac.metadata.name)),
  );
  await waitFor('all agent computers removed', async () =>
    (await api.store.list(AgentComputerType)).items.length === 0 ? true : undefined,
  );
  await operator.stop();
  await runtime.close({ stopRunners: true });
  await api.stop();
  await rm(dir, { recursive: true, force: true });
}, 90_000);

async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = READY_MS,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

const record = async (id: string): Promise<AgentComputerRecord> =>
  AgentComputerRecordSchema.parse(await (await call(api, `/v1/agent-computers/${id}`, { key })).json());

const untilStatus = (id: string, status: AgentComputerRecord['status']) =>
  waitFor(`agent computer ${status}`, async () => {
    const current = await record(id);
    return current.status === status ? current : undefined;
  });

async function created(name: string): Promise<AgentComputerRecord> {
  const res = await call(api, '/v1/agent-computers', { key, method: 'POST', body: { name } });
  expect(res.status).toBe(201);
  return AgentComputerRecordSchema.parse(await res.json());
}

async function stored(id: string): Promise<AgentComputer> {
  const ac = await api.store.get(AgentComputerType, namespace, id);
  if (ac === undefined) throw new Error(`agent computer ${id} is gone`);
  return ac;
}

async function runner(id: string): Promise<{ endpoint: string; token: string; ac: AgentComputer }> {
  const ac = await api.store.get(AgentComputerType, namespace, id);
  const secret = await api.store.get(SecretType, namespace, `${id}-runner-token`);
  const token = secret === undefined ? undefined : secretValue(secret, 'token');
  if (ac?.status?.endpoint === undefined || token === undefined) throw new Error('no runner yet');
  return { endpoint: ac.status.endpoint, token, ac };
}

const healthy = async (endpoint: string, token: string): Promise<boolean> =>
  fetch(`${endpoint}/healthz`, { headers: { authorization: `Bearer ${token}` } }).then(
    (res) => res.ok,
    () => false,
  );

describe('agent computers in the embedded default', () => {
  it('become ready over HTTP with a real runner process behind them', async () => {
    const made = await created('first');
    expect(made.status).toBe('provisioning');
    const ready = await untilStatus(made.id, 'ready');
    expect(ready.sandboxId).not.toBeNull();
    const { endpoint, token } = await runner(made.id);
    expect(await healthy(endpoint, token)).toBe(true);
  });

  it('require the workload token on the runner: 401 without it', async () => {
    const made = await created('guarded');
    await untilStatus(made.id, 'ready');
    const { endpoint } = await runner(made.id);
    expect((await fetch(`${endpoint}/healthz`)).status).toBe(401);
    expect(
      (
        await fetch(`${endpoint}/healthz`, {
          headers: { authorization: 'Bearer wrong-token-wrong-token-wrong-token' },
        })
      ).status,
    ).toBe(401);
  });

  it('bring a runner killed with SIGKILL back', async () => {
    const made = await created('resilient');
    await untilStatus(made.id, 'ready');
    const paths = workspacePaths(dir, namespace, made.id);
    const first = await readRunnerRecord(paths.record);
    if (first === undefined) throw new Error('no runner record');
    process.kill(first.pid, 'SIGKILL');
    const { endpoint, token } = await waitFor('a new healthy runner', async () => {
      const next = await readRunnerRecord(paths.record);
      if (next === undefined || next.pid === first.pid) return undefined;
      const current = await runner(made.id).catch(() => undefined);
      return current !== undefined && (await healthy(current.endpoint, current.token)) ? current : undefined;
    });
    expect(await healthy(endpoint, token)).toBe(true);
    expect((await record(made.id)).status).toBe('ready');
  });

  it('hibernate on stop (the runner ends) and resume on start', async () => {
    const made = await created('sleeper');
    await untilStatus(made.id, 'ready');
    const { endpoint, token } = await runner(made.id);
    expect((await call(api, `/v1/agent-computers/${made.id}/stop`, { key, method: 'POST' })).status).toBe(
      202,
    );
    await untilStatus(made.id, 'hibernated');
    expect(await healthy(endpoint, token)).toBe(false);
    expect((await call(api, `/v1/agent-computers/${made.id}/start`, { key, method: 'POST' })).status).toBe(
      202,
    );
    await untilStatus(made.id, 'ready');
    const resumed = await runner(made.id);
    expect(await healthy(resumed.endpoint, resumed.token)).toBe(true);
  });

  it('hibernate by themselves after idleTimeout, saying why, and resume on start', async () => {
    const made = await created('idler');
    await untilStatus(made.id, 'ready');
    const ac = await stored(made.id);
    await api.store.replace(AgentComputerType, { ...ac, spec: { ...ac.spec, idleTimeout: '3s' } });
    await untilStatus(made.id, 'hibernated');
    const slept = await stored(made.id);
    expect(slept.spec.operatingMode).toBe('Hibernated');
    expect(slept.metadata.annotations).toMatchObject({ 'agentry.dev/hibernated-by': 'idle-timeout' });
    expect(slept.status?.conditions).toContainEqual(
      expect.objectContaining({ type: 'Hibernated', reason: 'IdleTimeout' }),
    );
    const { items } = await api.store.list(EventType, { namespace });
    expect(items.map((event) => [event.involvedObject.name, event.reason])).toContainEqual([
      made.id,
      'IdleTimeout',
    ]);

    const latest = await stored(made.id);
    await api.store.replace(AgentComputerType, { ...latest, spec: { ...latest.spec, idleTimeout: '15m' } });
    expect((await call(api, `/v1/agent-computers/${made.id}/start`, { key, method: 'POST' })).status).toBe(
      202,
    );
    await untilStatus(made.id, 'ready');
    // Becoming ready again is activity: the idle clock restarts from the resume.
    const resumed = await stored(made.id);
    expect(Date.parse(resumed.status?.lastActivityAt ?? '')).toBeGreaterThan(
      Date.parse(slept.status?.lastActivityAt ?? ''),
    );
  });

  it('remove the runner and the resource on delete', async () => {
    const made = await created('goner');
    await untilStatus(made.id, 'ready');
    const { endpoint, token } = await runner(made.id);
    expect((await call(api, `/v1/agent-computers/${made.id}`, { key, method: 'DELETE' })).status).toBe(204);
    await waitFor('resource gone', async () =>
      (await api.store.get(AgentComputerType, namespace, made.id)) === undefined ? true : undefined,
    );
    expect(await healthy(endpoint, token)).toBe(false);
    expect((await call(api, `/v1/agent-computers/${made.id}`, { key })).status).toBe(404);
  });
});
