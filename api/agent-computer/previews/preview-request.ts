import type { IncomingMessage } from 'node:http';
import { PREVIEW_PATH_PREFIX } from './present.js';

/** A request for a preview: its token, the path the workspace should see, and how it was addressed. */
export interface PreviewRequest {
  token: string;
  /** The path and query to send on (`/` at least). */
  path: string;
  /** `/previews/<token>` in path mode; empty in host mode. */
  prefix: string;
  pathMode: boolean;
  /** Path mode without the slash after the token: the browser is sent to `<prefix>/` first. */
  needsSlash: boolean;
}

/** The host name of a Host header: lower case, without the port. */
function hostName(host: string | undefined): string | undefined {
  if (host === undefined) return undefined;
  const name = host.startsWith('[') ? host : host.replace(/:\d+$/, '');
  return name.toLowerCase();
}

/**
 * Whether (and how) a request addresses a preview: `/previews/<token>/…` on any host, or any path
 * on `<token>.<domain>` when host mode is configured. Undefined: not a preview request.
 */
export function previewRequestOf(
  req: IncomingMessage,
  domain: string | undefined,
): PreviewRequest | undefined {
  const url = req.url ?? '/';
  if (domain !== undefined) {
    const host = hostName(req.headers.host);
    const suffix = `.${domain}`;
    if (host?.endsWith(suffix) === true) {
      const token = host.slice(0, -suffix.length);
      if (token !== '' && !token.includes('.'))
        return { token, path: url, prefix: '', pathMode: false, needsSlash: false };
    }
  }
  if (!url.startsWith(PREVIEW_PATH_PREFIX)) return undefined;
  const rest = url.slice(PREVIEW_PATH_PREFIX.length);
  const end = rest.search(/[/?]/);
  const token = end === -1 ? rest : rest.slice(0, end);
  const after = end === -1 ? '' : rest.slice(end);
  const prefix = `${PREVIEW_PATH_PREFIX}${token}`;
  return {
    token,
    path: after.startsWith('/') ? after : `/${after}`,
    prefix,
    pathMode: true,
    needsSlash: !after.startsWith('/'),
  };
}
