import { ApiError } from './errors.js';

/**
 * Object storage failing (an `Unavailable` store error), in the API's words: 503 for the client,
 * the store's error kept as the cause for the log, never in the response.
 */
export const storageUnavailable = (err: unknown): ApiError =>
  new ApiError('service_unavailable', 'object storage is unavailable', undefined, { cause: err });
