// The run's settings (see main.ts for what each means) and the names it creates.
import { envCount, envNumber, LogLevelSchema } from '../support/env.js';
import { interruptOnSignals } from '../support/interrupt.js';

export const TRANSITIONS = envCount('BENCH_TRANSITIONS', 1000);
export const WEBHOOKS = envCount('BENCH_WEBHOOKS', 3);
export const SIGNS = envCount('BENCH_SIGNS', 10_000);
export const WRITERS = envCount('BENCH_WRITERS', 4);
export const RATE = envNumber('BENCH_RATE', 50);
export const TIMEOUT_MS = Math.max(1000, envNumber('BENCH_TIMEOUT_MS', 120_000));
/** Given: the controller's log goes to stderr at this level. Either way its warnings are counted. */
export const LOG_LEVEL = LogLevelSchema.optional().parse(process.env.BENCH_LOG_LEVEL);

export const STEPS_PER_TASK = 5;
export const TASKS = Math.ceil(TRANSITIONS / STEPS_PER_TASK);
export const DELIVERIES = TRANSITIONS * WEBHOOKS;
export const CONTROL = 'agentry-system';
export const ORG = 'bench';
export const NS = `agentry-org-${ORG}`;
export const PUBLIC_URL = 'https://agentry.example';
/** The controller's defaults (operator/webhook/controller.ts), which the floor copies. */
export const PER_WEBHOOK_CONCURRENCY = 4;
export const DELIVERY_WORKERS = 8;
/** One floor POST, as the controller's attempt timeout. */
export const POST_TIMEOUT_MS = 15_000;

/** Aborted by SIGINT/SIGTERM: every wait gives up, and everything is stopped on the way out. */
export const interruption = interruptOnSignals();
