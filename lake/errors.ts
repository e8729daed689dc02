import type { z } from 'zod';
import type { LakeErrorCodeSchema } from '../platform/lake-protocol.js';

export type LakeErrorCode = z.infer<typeof LakeErrorCodeSchema>;

/** The one error the lake's routes answer with; anything else is a 500 whose cause stays in the log. */
export class LakeError extends Error {
  override name = 'LakeError';

  constructor(
    readonly code: LakeErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  get status(): number {
    return statusOf(this.code);
  }
}

export function statusOf(code: LakeErrorCode): number {
  switch (code) {
    case 'sql_error':
    case 'bad_request':
      return 400;
    case 'unauthorized':
      return 401;
    case 'not_found':
      return 404;
    case 'result_too_large':
      return 413;
    case 'busy':
      return 429;
    case 'not_loaded':
      return 503;
    case 'timeout':
    case 'not_applied':
      return 504;
  }
}

export const errorBody = (code: string, message: string) => ({ error: { code, message } });

/** A message for a status or log line, whatever was thrown. */
export const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * An absolute path of two segments or more (`/var/lib/agentry-lake/spill`), not one inside a URL
 * (`file:///data/x.csv`, `s3://bucket/key`) nor a division in quoted SQL (`a/b`).
 */
const SERVER_PATH = /(?<![\w.:/~)\]-])(?:\/[\w.@%+=,-]+){2,}\/?/g;

/**
 * DuckDB's and the system's messages may name the server's own files (the lake's directories,
 * what a failed read looked for): clients and logs get `<path>` instead.
 */
export const withoutServerPaths = (message: string): string => message.replace(SERVER_PATH, '<path>');
