import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * The workload token check shared by the servers the operator starts inside workloads (the
 * runner, the lake server): each trusts no network and requires its token on every request.
 */

const BEARER = /^Bearer ([^\s]+)$/i;

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/**
 * Compares in constant time. Hashing first gives both sides the same length, so neither the
 * comparison nor an early length check tells an attacker how long the token is.
 */
export function tokensEqual(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}

/** The token from `Authorization: Bearer <token>`, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return BEARER.exec(header.trim())?.[1];
}

export interface WorkloadAuthOptions {
  /** Named in the 401's `www-authenticate` header, e.g. `agentry-runner`. */
  realm: string;
}

/** Requires the workload token on every request, /healthz included; a 401 `{error:{code,message}}` otherwise. */
export function requireWorkloadToken(token: string, options: WorkloadAuthOptions): RequestHandler {
  const challenge = `Bearer realm="${options.realm}"`;
  return function checkWorkloadToken(req: Request, res: Response, next: NextFunction): void {
    const presented = bearerToken(req.headers.authorization);
    if (presented !== undefined && tokensEqual(presented, token)) {
      next();
      return;
    }
    res.setHeader('www-authenticate', challenge);
    res.status(401).json({
      error: {
        code: 'unauthorized',
        message:
          presented === undefined
            ? 'Send the workload token as "Authorization: Bearer <token>"'
            : 'The workload token is not valid',
      },
    });
  };
}
