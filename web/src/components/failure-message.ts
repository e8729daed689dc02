import { ApiFailure } from '../http/client.js';

/** The message a person can act on: the API's own (docs/api.md#errors), else a plain one. */
export function failureMessage(err: unknown): string {
  if (err instanceof ApiFailure) return err.message;
  return 'The server could not be reached';
}
