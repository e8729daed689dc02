// `agentry api` with AGENTRY_API_WORKERS=2 as a real process tree on the real kube-apiserver: both
// workers answer (their log lines carry their ids), /metrics is every worker's, a killed worker is
// replaced while the other answers, and SIGTERM drains (an open event stream ends cleanly).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { ApiProcess } from '../support/api-process.js';
import { seedOrganizationTask } from '../support/seed-organization.js';
import { freeLoopbackPort } from '../support/free-port.js';
import { clusterStore, testCluster } from './support.js';

const store = clusterStore();
const control = `workers-${randomBytes(3).toString('hex')}`;
let seeded: { key: string; taskId: string };

/** `agentry api` from source with `workers` workers on `port`, logging every request (info). */
function startApi(port: number, workers: string): ApiProcess {
  return ApiProcess.start(
    process.execPath,
    ['--import', './test/support/register-swc.mjs', 'cli/main.ts', 'api'],
    {
      AGENTRY_STORE: 'kubernetes',
      KUBECONFIG: testCluster().kubeconfig,
      AGENTRY_NAMESPACE: control,
      AGENTRY_PORT: String(port),
      AGENTRY_API_WORKERS: workers,
      AGENTRY_LOG_LEVEL: 'info',
    },
  );
}

/** A GET on a connection of its own (so that node:cluster may hand each to another worker). */
const open = (port: number, path: string, headers: Record<string, string> = {}): Promise<IncomingMessage> =>
  new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, headers, agent: false }, resolve).on('error', reject).end();
  });

async function get(port: number, path: string, key?: string): Promise<{ status: number; body: string }> {
  const res = await open(port, path, key === undefined ? {} : { API_KEY: key });
  let body = '';
  res.setEncoding('utf8');
  for await (const chunk of res) body += String(chunk);
  return { status: res.statusCode ?? 0, body };
}

/** The value of one sample line of the Prometheus text, e.g. `agentry_api_workers`. */
function sample(text: string, pattern: RegExp): number | undefined {
  const line = text.split('\n').find((each) => pattern.test(each));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

beforeAll(async () => {
  seeded = await seedOrganizationTask(store, {
    controlNamespace: control,
    organization: `w-${randomBytes(3).toString('hex')}`,
  });
});
afterAll(async () => {
  await store.close();
});

describe('agentry api with two workers', () => {
  let api: ApiProcess;
  let port: number;
  beforeAll(async () => {
    port = await freeLoopbackPort();
    api = startApi(port, '2');
    await api.serving(2, 90_000);
  }, 120_000);
  afterAll(async () => {
    await api.stop();
  });

  it('answers from both workers, each logging requests with its worker id', async () => {
    for (let i = 0; i < 10; i++) {
      const res = await get(port, `/v1/tasks/${seeded.taskId}`, seeded.key);
      expect(res.status).toBe(200);
    }
    const answeredBy = new Set(
      api
        .logged('request completed')
        .filter((line) => JSON.stringify(line).includes(`/v1/tasks/${seeded.taskId}`))
        .map((line) => line.worker),
    );
    expect(answeredBy.size).toBe(2);
    expect([...answeredBy].every((id) => typeof id === 'number')).toBe(true);
  });

  it('serves one /metrics for every worker, whichever answers the scrape', async () => {
    for (let i = 0; i < 20; i++) expect((await get(port, '/health')).status).toBe(200);
    const healthCount = /^agentry_http_request_duration_seconds_count\{.*route="\/health".*\} /;
    for (let scrape = 0; scrape < 4; scrape++) {
      const metrics = await get(port, '/metrics');
      expect(metrics.status).toBe(200);
      expect(sample(metrics.body, healthCount)).toBe(20);
      expect(sample(metrics.body, /^agentry_api_workers /)).toBe(2);
    }
  });

  it('replaces a killed worker and keeps answering meanwhile', async () => {
    const [victim] = api.logged('api worker started');
    const pid = victim?.pid;
    if (pid === undefined) throw new Error('no worker pid logged');
    process.kill(pid, 'SIGKILL');
    await api.waitFor(
      'the killed worker noticed',
      () => api.logged('api worker exited; starting another').length === 1,
    );
    for (let i = 0; i < 10; i++)
      expect((await get(port, `/v1/tasks/${seeded.taskId}`, seeded.key)).status).toBe(200);
    await api.serving(3, 90_000);
    const started = api.logged('api worker started');
    expect(started).toHaveLength(3);
    expect(started[2]?.pid).not.toBe(pid);
    const metrics = await get(port, '/metrics');
    expect(sample(metrics.body, /^agentry_api_worker_restarts_total /)).toBe(1);
    expect(sample(metrics.body, /^agentry_api_workers /)).toBe(2);
  }, 120_000);
});

describe('agentry api with two workers on SIGTERM', () => {
  it('ends an open event stream cleanly, stops accepting and exits 0 once every worker has', async () => {
    const port = await freeLoopbackPort();
    const api = startApi(port, '2');
    try {
      await api.serving(2, 90_000);
      const stream = await open(port, `/v1/tasks/${seeded.taskId}/events`, { API_KEY: seeded.key });
      expect(stream.statusCode).toBe(200);
      expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
      const ended = new Promise<string>((resolve, reject) => {
        stream.on('aborted', () => {
          reject(new Error('the event stream was cut'));
        });
        stream.on('error', reject);
        stream.on('end', () => {
          resolve('ended');
        });
        stream.resume();
      });
      api.child.kill('SIGTERM');
      await expect(ended).resolves.toBe('ended');
      expect(await api.exited).toBe(0);
      expect(api.logged('api worker stopped').map((line) => line.code)).toEqual([0, 0]);
      await expect(get(port, '/healthz')).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      await api.stop();
    }
  }, 120_000);
});
