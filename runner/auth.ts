import type { RequestHandler } from 'express';
import { requireWorkloadToken } from '../platform/workload-auth.js';

// The check lives in platform/ since the lake server needs it too; the runner keeps its names.
export { bearerToken, tokensEqual } from '../platform/workload-auth.js';

/** Requires the workload token on every request, /healthz included: the runner trusts no network. */
export function requireToken(token: string): RequestHandler {
  return requireWorkloadToken(token, { realm: 'agentry-runner' });
}
