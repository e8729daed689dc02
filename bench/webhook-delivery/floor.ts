// The floor: the captured requests POSTed by this process with node:http straight to the receivers,
// at the measured run's release times, with the controller's concurrency and connection policy.
import { request as httpRequest } from 'node:http';
import type { Agent, OutgoingHttpHeaders } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { pool } from '../support/pool.js';
import { sleepUntil } from '../support/wait.js';
import { PER_WEBHOOK_CONCURRENCY, POST_TIMEOUT_MS, interruption } from './config.js';
import { deliveryRun, reportDelivery } from './deliveries.js';
import type { DeliveryRun } from './deliveries.js';
import { env, received, resetRecorders } from './environment.js';
import type { Phase } from './phases.js';
import type { Captured } from './receivers.js';

/** POSTs one captured request to `url` on a new connection (or `agent`); resolves with the status. */
function post(url: URL, request: Captured, agent: Agent | false): Promise<number> {
  const pick = (name: string): string => String(request.headers[name] ?? '');
  const headers: OutgoingHttpHeaders = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(request.body),
    'user-agent': pick('user-agent'),
    'webhook-id': pick('webhook-id'),
    'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
    'webhook-signature': pick('webhook-signature'),
  };
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      method: 'POST',
      hostname: url.hostname,
      port: Number(url.port),
      path: url.pathname,
      headers,
      agent,
    });
    const timer = setTimeout(() => {
      req.destroy(new Error(`no answer within ${POST_TIMEOUT_MS} ms`));
    }, POST_TIMEOUT_MS);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => {
        clearTimeout(timer);
        resolve(res.statusCode ?? 0);
      });
    });
    req.end(request.body);
  });
}

export interface Planned {
  id: string;
  webhook: string;
  releaseMs: number;
}

/**
 * The floor: `planned` requests POSTed straight to the receivers, `concurrency` in flight per webhook
 * (each webhook's in release order), each not before its release time.
 */
export async function floor(
  label: string,
  planned: readonly Planned[],
  requests: ReadonlyMap<string, Captured>,
  concurrency: number,
  agent: Agent | false,
): Promise<DeliveryRun> {
  resetRecorders();
  const urls = new Map(env.receivers.map((r) => [r.webhook, new URL(r.url)]));
  const start = performance.now();
  const sent = new Map<string, { webhook: string; at: number }>();
  let failures = 0;
  await Promise.all(
    [...urls].map(([webhook, url]) => {
      const mine = planned.filter((p) => p.webhook === webhook).sort((a, b) => a.releaseMs - b.releaseMs);
      return pool(
        mine,
        concurrency,
        async ({ id, releaseMs }) => {
          const request = requests.get(id);
          if (request === undefined) throw new Error(`no captured request for ${id}`);
          sent.set(id, { webhook, at: start + releaseMs });
          await sleepUntil(start + releaseMs, interruption.signal);
          const status = await post(url, request, agent);
          if (status !== 200) failures++;
        },
        interruption.signal,
      );
    }),
  );
  if (failures > 0) throw new Error(`${label}: ${failures} POSTs were not answered 200`);
  await sleep(50);
  return deliveryRun(label, sent, received(), start);
}

/** The measured run's deliveries, released at their transitions' offsets from its first write. */
function replayPlan(phase: Phase): Planned[] {
  const first = Math.min(...phase.run.timed.map((t) => t.sent));
  return phase.run.timed.map((t) => ({ id: t.id, webhook: t.webhook, releaseMs: t.sent - first }));
}

/** The floor of a measured phase: its requests at its release times, as the controller would send them. */
export async function replayFloor(phase: Phase): Promise<DeliveryRun> {
  const run = await floor(
    `floor, same release times, ${PER_WEBHOOK_CONCURRENCY} per webhook, new connection each`,
    replayPlan(phase),
    phase.requests,
    PER_WEBHOOK_CONCURRENCY,
    false,
  );
  reportDelivery(run);
  return run;
}
