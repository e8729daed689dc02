import { z } from 'zod';
import { StoreError } from '../types.js';
import type { StoreErrorReason } from '../types.js';

/** The part of a Kubernetes `Status` (an API error answer) the store reads. */
export const KubeStatusSchema = z.object({
  kind: z.literal('Status'),
  status: z.string().optional(),
  message: z.string().optional(),
  reason: z.string().optional(),
  code: z.number().int().optional(),
  details: z
    .object({
      name: z.string().optional(),
      group: z.string().optional(),
      kind: z.string().optional(),
    })
    .optional(),
});
export type KubeStatus = z.infer<typeof KubeStatusSchema>;

/** An answer the store read as an error: the `cause` of a StoreError from the API server. */
export class KubernetesApiError extends Error {
  constructor(
    readonly code: number,
    readonly status: KubeStatus | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'KubernetesApiError';
  }
}

export const parseStatus = (body: unknown): KubeStatus | undefined => {
  const parsed = KubeStatusSchema.safeParse(body);
  return parsed.success ? parsed.data : undefined;
};

export const isSuccess = (code: number): boolean => code >= 200 && code < 300;

/** Maps an HTTP status code (and the Status reason, which tells 409s apart) to a StoreError reason. */
export function reasonFor(code: number, statusReason?: string): StoreErrorReason {
  if (code === 404) return 'NotFound';
  if (code === 409) return statusReason === 'AlreadyExists' ? 'AlreadyExists' : 'Conflict';
  if (code === 410) return 'Expired';
  if (code === 401 || code === 403) return 'Forbidden';
  if (code === 429 || code >= 500) return 'Unavailable';
  // 400 BadRequest (e.g. a malformed label selector), 422 Invalid, 405, 413, 415: the request is wrong.
  if (code >= 400) return 'Invalid';
  return 'Unavailable';
}

const MAX_TEXT = 300;

function messageOf(code: number, status: KubeStatus | undefined, body: unknown): string {
  if (status?.message !== undefined && status.message !== '') return status.message;
  if (typeof body === 'string' && body.trim() !== '')
    return `HTTP ${code}: ${body.trim().slice(0, MAX_TEXT)}`;
  return `HTTP ${code}`;
}

/** The StoreError for an API server answer that is not a success; keeps the server's message. */
export function errorFromResponse(code: number, body: unknown, context: string): StoreError {
  const status = parseStatus(body);
  const message = messageOf(code, status, body);
  const cause = new KubernetesApiError(code, status, message);
  return new StoreError(reasonFor(code, status?.reason), `${context}: ${message}`, { cause });
}

/** The StoreError for an `ERROR` watch event, whose object is a Status. */
export function errorFromWatchStatus(object: unknown, context: string): StoreError {
  const status = parseStatus(object);
  const code = status?.code ?? 500;
  return errorFromResponse(code, object, context);
}

/** The StoreError for a request that got no answer: refused, reset, timed out, TLS failure. */
export function errorFromNetwork(err: unknown, context: string): StoreError {
  if (err instanceof StoreError) return err;
  const detail = err instanceof Error ? err.message : String(err);
  return new StoreError('Unavailable', `${context}: ${detail}`, { cause: err });
}

/** Whether a 404 answer says the named object is missing (not the type, nor the namespace). */
export function isObjectNotFound(body: unknown, name: string): boolean {
  const status = parseStatus(body);
  return status?.reason === 'NotFound' && status.details?.name === name;
}
