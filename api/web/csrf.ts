import type { Request } from 'express';
import { ApiError } from '../errors.js';

/** The header the web pages send with every mutation; another site's form or fetch cannot set it without CORS. */
export const CSRF_HEADER = 'x-agentry-csrf';

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The origin (`scheme://host[:port]`) of the server's public URL: where its pages are served from. */
export const ownOriginOf = (publicUrl: string): string => new URL(publicUrl).origin;

const forbidden = (why: string): ApiError => new ApiError('forbidden', why);

/**
 * The browser says where a request comes from: `Origin` (when it sends one) must be this server's
 * own, and `Sec-Fetch-Site` (when sent) `same-origin`. A browser without them still needs the
 * CSRF header on mutations, which only same-origin scripts can add.
 */
export function refuseOtherOrigins(req: Request, ownOrigin: string): void {
  const origin = req.get('origin');
  if (origin !== undefined && origin !== ownOrigin) {
    throw forbidden('Requests from another origin are refused');
  }
  const site = req.get('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin') {
    throw forbidden('Requests from another site are refused');
  }
}

/**
 * A cookie-authenticated mutation (POST, PUT, PATCH, DELETE) must prove it comes from our own pages:
 * the CSRF header, and no foreign Origin or Sec-Fetch-Site. Reads (EventSource streams included,
 * which cannot set headers) need only the cookie, which SameSite=Strict keeps to our own site.
 */
export function refuseCrossSiteMutation(req: Request, ownOrigin: string): void {
  if (!UNSAFE_METHODS.has(req.method)) return;
  if (req.get(CSRF_HEADER) !== '1') {
    throw forbidden(`A request authenticated by the session cookie needs the ${CSRF_HEADER} header`);
  }
  refuseOtherOrigins(req, ownOrigin);
}
