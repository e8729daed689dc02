/**
 * The pages' one way to the JSON API: same-origin fetches that carry the session cookie, never an
 * API key (the key lives only in the HttpOnly cookie the server issued at sign-in). Mutations send
 * the CSRF header the server requires of cookie-authenticated requests (docs/api.md#web-pages).
 */

export const CSRF_HEADER = 'x-agentry-csrf';

/** An answer other than 2xx, read from either error shape the API uses (docs/api.md#errors). */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RequestOptions {
  body?: unknown;
  signal?: AbortSignal;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** `{ error: { code, message } }` (task API) or `{ error: "message", code }` (context-lake API). */
function failureOf(status: number, body: unknown): ApiFailure {
  if (isRecord(body)) {
    const { error, code } = body;
    if (isRecord(error) && typeof error.message === 'string') {
      return new ApiFailure(status, typeof error.code === 'string' ? error.code : 'error', error.message);
    }
    if (typeof error === 'string')
      return new ApiFailure(status, typeof code === 'string' ? code : 'error', error);
  }
  return new ApiFailure(status, 'error', `The server answered ${status}`);
}

/** Sends one request; resolves to the parsed JSON body (undefined for 204), rejects with ApiFailure. */
export async function request(method: Method, path: string, options: RequestOptions = {}): Promise<unknown> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') headers[CSRF_HEADER] = '1';
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    body: options.body === undefined ? null : JSON.stringify(options.body),
    signal: options.signal ?? null,
  });
  const body = await jsonBodyOf(response);
  if (!response.ok) throw failureOf(response.status, body);
  return body;
}

/**
 * The answer's JSON, or undefined when it has none: a 204, or a proxy's or the server's plain-text
 * answer (a 502 page, the 503 of unbuilt pages), which must become an ApiFailure, not a SyntaxError.
 */
async function jsonBodyOf(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === '' || !(response.headers.get('content-type') ?? '').includes('json')) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
