/**
 * A request URL as logs may show it: share-link tokens, prompt tokens and the signatures of signed URLs are
 * bearer credentials (whoever holds one reads the task or the object), so they become "[redacted]";
 * the rest of the path and query stays for debugging.
 */
const CREDENTIAL_PARAMS = new Set([
  'signature',
  'x-amz-signature',
  'x-amz-credential',
  'x-amz-security-token',
  'token',
  'api_key',
  'api-key',
  // The model gateway's Gemini calls may carry the prompt token as `?key=` (Google's convention).
  'key',
]);
// The API's share links (/v1/share/…), the share page (/share/…) and preview URLs (/previews/…) carry a token.
const SHARE_PATH = /^((?:\/v1)?\/share\/|\/previews\/)[^/?#]+/;
const REDACTED = '[redacted]';

export function loggedUrl(url: string): string {
  const queryAt = url.indexOf('?');
  const path = (queryAt === -1 ? url : url.slice(0, queryAt)).replace(SHARE_PATH, `$1${REDACTED}`);
  if (queryAt === -1) return path;
  const query = url
    .slice(queryAt + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq === -1 ? pair : pair.slice(0, eq);
      return eq !== -1 && CREDENTIAL_PARAMS.has(safeDecode(name).toLowerCase())
        ? `${name}=${REDACTED}`
        : pair;
    })
    .join('&');
  return `${path}?${query}`;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
