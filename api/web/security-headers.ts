import type { ServerResponse } from 'node:http';

/**
 * The pages' Content-Security-Policy: every script, style and font is a file of ours (the Vite
 * build has no inline script or style), requests go to this origin only, nothing may frame the
 * pages, and no <base> or foreign form target can redirect them.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': PAGE_CSP,
  // Share tokens are in page URLs: no Referer may carry them to another site.
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

/** Sets the security headers of every page and asset answer (docs/api.md#web-pages). */
export function setPageSecurityHeaders(res: ServerResponse): void {
  for (const [name, value] of Object.entries(PAGE_HEADERS)) res.setHeader(name, value);
}
