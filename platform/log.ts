import { pino } from 'pino';
import type { Logger, LevelWithSilent, DestinationStream } from 'pino';

export type { Logger };

/** Header and field names whose values are credentials; pino writes "[redacted]" instead. */
const REDACTED_PATHS = [
  'req.headers.api_key',
  'req.headers["api-key"]',
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  '*.apiKey',
  '*.secret',
];

/** JSON logs, one object a line, credentials redacted. */
export function createLogger(
  options: { level: LevelWithSilent; name?: string },
  destination?: DestinationStream,
): Logger {
  return pino(
    {
      name: options.name ?? 'agentry',
      level: options.level,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}
