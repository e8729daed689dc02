// The run's settings (see main.ts for what each means) and the names it creates.
import { availableParallelism } from 'node:os';
import { envCount, envNumber, LogLevelSchema } from '../support/env.js';
import { interruptOnSignals } from '../support/interrupt.js';

export const TASKS = envCount('BENCH_TASKS', 50);
export const WARMUP = envCount('BENCH_WARMUP', 1, 0);
export const EVENT_RATE = Math.max(1, envNumber('BENCH_EVENT_RATE', 1000));
export const EVENT_SECONDS = Math.max(0.1, envNumber('BENCH_EVENT_SECONDS', 5));
export const EVENT_COUNT = Math.round(EVENT_RATE * EVENT_SECONDS);
/** Busy-loop processes running beside the live-event phase (default one per core). */
export const BUSY_LOOPS = envCount('BENCH_BUSY_LOOPS', availableParallelism(), 0);
/** Live-event phases run one after another (each prints its figures; the summary takes the median). */
export const EVENT_ROUNDS = envCount('BENCH_EVENT_ROUNDS', 1);
/** `events`: only the live-event phase (with its pipe floor), for iterating on the event path. */
export const EVENTS_ONLY = process.env.BENCH_PHASES === 'events';
/** Per-hop marks of the runner and the API (platform/event-trace.ts); BENCH_TRACE=0 turns them off. */
export const TRACE = process.env.BENCH_TRACE !== '0';
/** Where runners write CPU profiles (--cpu-prof), for finding their cost per event; unset: none. */
export const CPU_PROFILE_DIR = process.env.BENCH_CPU_PROF === '' ? undefined : process.env.BENCH_CPU_PROF;
export const RUNNER_STARTS = envCount('BENCH_RUNNER_STARTS', 10, 0);
/** The process runtime's SIGTERM → SIGKILL grace for runners (3 s as in the end-to-end tests). */
export const STOP_GRACE_MS = envNumber('BENCH_STOP_GRACE_MS', 3000);
export const TIMEOUT_MS = Math.max(1000, envNumber('BENCH_TIMEOUT_MS', 60_000));
export const LOG_LEVEL = LogLevelSchema.parse(process.env.BENCH_LOG_LEVEL ?? 'silent');
export const ORG = 'bench';
export const NAMESPACE = `agentry-org-${ORG}`;
/** Room for the deleted workspaces the operator has not finished removing yet. */
export const AGENT_COMPUTER_LIMIT = 100;

/** Aborted by SIGINT/SIGTERM: every wait gives up, and the stack is stopped on the way out. */
export const interruption = interruptOnSignals();
