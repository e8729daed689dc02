import { z } from 'zod';
import { describeError } from '../../../platform/describe-error.js';

const HealthSchema = z.object({ status: z.literal('ok') });

export type HealthResult = { ok: true } | { ok: false; problem: string };

/** GET /healthz with the workload token, cut off after `timeoutMs` or when `signal` aborts. */
export async function probeRunnerHealth(
  endpoint: string,
  token: string,
  options: { timeoutMs: number; signal?: AbortSignal | undefined },
): Promise<HealthResult> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal === undefined ? timeout : AbortSignal.any([options.signal, timeout]);
  try {
    const res = await fetch(`${endpoint}/healthz`, { headers: { authorization: `Bearer ${token}` }, signal });
    const body: unknown = await res.json().catch(() => undefined);
    if (res.status !== 200) return { ok: false, problem: `health check answered HTTP ${res.status}` };
    return HealthSchema.safeParse(body).success
      ? { ok: true }
      : { ok: false, problem: 'health check answered an unexpected body' };
  } catch (err) {
    const what = timeout.aborted ? `no answer within ${options.timeoutMs} ms` : describeError(err);
    return { ok: false, problem: `health check failed (${what})` };
  }
}
