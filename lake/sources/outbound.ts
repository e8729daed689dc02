import { Agent as HttpAgent } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import {
  TargetRefusedError,
  guardedLookup,
  hostOf,
  pinnedLookup,
  resolveTargetHost,
} from '../../platform/outbound-targets.js';
import type { TargetPolicy, TargetSubject } from '../../platform/outbound-targets.js';
import { SourceError } from './types.js';

/**
 * Every connection a dataset load makes goes through here: the platform's SSRF guard
 * (platform/outbound-targets.ts) checks each host, DNS answers included, and the connection goes
 * to the address it checked. Redirects are never followed: they could lead anywhere.
 */

export const DATASET_SOURCE: TargetSubject = { noun: 'dataset source', plural: 'dataset downloads' };

/** A refused target as a load failure; any other error as it is. */
function asSourceError(err: unknown, display: string): unknown {
  return err instanceof TargetRefusedError
    ? new SourceError(`${display}: ${err.message}`, { cause: err })
    : err;
}

/** Checks the host of `url` now (an IP literal is never passed to an Agent's lookup). */
export async function checkTarget(url: URL, policy: TargetPolicy, display: string): Promise<void> {
  try {
    await resolveTargetHost(hostOf(url), policy, { subject: DATASET_SOURCE });
  } catch (err) {
    throw asSourceError(err, display);
  }
}

/** Agents for the AWS SDK: every name they resolve is checked, and connections go to the checked address. */
export function guardedAgents(policy: TargetPolicy): { httpAgent: HttpAgent; httpsAgent: HttpsAgent } {
  const lookup = guardedLookup(policy, { subject: DATASET_SOURCE });
  return {
    httpAgent: new HttpAgent({ keepAlive: true, lookup }),
    httpsAgent: new HttpsAgent({ keepAlive: true, lookup }),
  };
}

export interface GuardedGetOptions {
  policy: TargetPolicy;
  signal: AbortSignal;
  /** How messages name the URL (without its query: a presigned URL's signature is a credential). */
  display: string;
  /** The answer's headers must arrive within this long. */
  headersTimeoutMs?: number | undefined;
  /** Extra trusted certificates (tests' own loopback servers). */
  ca?: string | undefined;
  /** HEAD asks for the headers alone (an object's version); default GET. */
  method?: 'GET' | 'HEAD';
}

/** GET (or HEAD) over https to the checked address; resolves with a 2xx answer whose body is still to be read. */
export async function guardedGet(url: URL, options: GuardedGetOptions): Promise<IncomingMessage> {
  const { display } = options;
  const host = hostOf(url);
  let target;
  try {
    target = await resolveTargetHost(host, options.policy, { subject: DATASET_SOURCE });
  } catch (err) {
    throw asSourceError(err, display);
  }
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const request = httpsRequest({
      method: options.method ?? 'GET',
      hostname: host,
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      // A fresh connection: a pooled one could lead to an address checked for another request.
      agent: false,
      lookup: pinnedLookup(target.address, target.family),
      ...(isIP(host) === 0 ? { servername: host } : {}),
      ...(options.ca === undefined ? {} : { ca: options.ca }),
      signal: options.signal,
    });
    const timer =
      options.headersTimeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            request.destroy(new SourceError(`${display}: the server did not answer within client_timeout`));
          }, options.headersTimeoutMs);
    request.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    request.on('response', (answer) => {
      clearTimeout(timer);
      resolve(answer);
    });
    request.end();
  });
  const status = response.statusCode ?? 0;
  if (status >= 200 && status < 300) return response;
  response.destroy();
  throw new SourceError(
    status >= 300 && status < 400
      ? `${display}: the server answered HTTP ${status} (redirects are not followed: use the final URL)`
      : `${display}: the server answered HTTP ${status}`,
  );
}
