import { parseRetrySchedule } from '../operator/webhook/retry-schedule.js';
import { publicUrlOf } from '../platform/config.js';
import type { Config } from '../platform/config.js';

/**
 * The operator's webhook delivery settings from the configuration. `privateByDefault`: whether
 * private and loopback targets are allowed when AGENTRY_WEBHOOK_PRIVATE_TARGETS is unset (yes on one
 * machine, no in a cluster).
 */
export function webhookDeliverySettings(
  config: Config,
  privateByDefault: boolean,
): { publicUrl: string; allowPrivateTargets: boolean; retrySchedule?: number[] } {
  const flag = config.AGENTRY_WEBHOOK_PRIVATE_TARGETS;
  const schedule = config.AGENTRY_WEBHOOK_RETRY_SCHEDULE;
  return {
    publicUrl: publicUrlOf(config),
    allowPrivateTargets: flag === undefined ? privateByDefault : flag === 'true',
    ...(schedule === undefined ? {} : { retrySchedule: parseRetrySchedule(schedule) }),
  };
}
