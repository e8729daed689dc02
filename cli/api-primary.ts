import cluster from 'node:cluster';
import type { Worker } from 'node:cluster';
import { Counter, Gauge, Registry } from 'prom-client';
import type { Logger } from '../platform/log.js';
import { serveClusterMetrics } from './cluster-metrics.js';

// `agentry api` with AGENTRY_API_WORKERS above 1: this process forks the workers (each runs
// `agentry api` itself and listens on the same port: node:cluster hands them connections in turn),
// replaces one that dies, serves their metrics as one view, and on SIGTERM or SIGINT has each drain
// and exits once all have. On the Kubernetes store the workers share nothing: their caches are
// filled by watches of their own.

/** The first restart of a worker waits this long, each further one twice as long as the last. */
const RESTART_FIRST_DELAY_MS = 250;
const RESTART_MAX_DELAY_MS = 30_000;
/** A worker that lived this long was healthy: its next failure starts the back-off again. */
const HEALTHY_LIFETIME_MS = 60_000;

/** One of the N places a worker runs in; its back-off survives the worker. */
interface Slot {
  worker?: Worker;
  startedAt: number;
  failures: number;
}

function primaryMetrics(slots: readonly Slot[]): { registry: Registry; restarts: Counter } {
  const registry = new Registry();
  const restarts = new Counter({
    name: 'agentry_api_worker_restarts_total',
    help: 'API worker processes that exited unexpectedly and were started again',
    registers: [registry],
  });
  new Gauge({
    name: 'agentry_api_workers',
    help: 'API worker processes running',
    registers: [registry],
    collect() {
      this.set(slots.filter((slot) => slot.worker !== undefined).length);
    },
  });
  return { registry, restarts };
}

/** Runs `workers` API workers until SIGTERM or SIGINT; 0 when every one drained and exited cleanly. */
export async function runApiPrimary(options: { workers: number; logger: Logger }): Promise<number> {
  const { logger } = options;
  const stopRequested = new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  const slots: Slot[] = Array.from({ length: options.workers }, () => ({ startedAt: 0, failures: 0 }));
  const { registry, restarts } = primaryMetrics(slots);
  serveClusterMetrics(registry);
  const pendingRestarts = new Set<NodeJS.Timeout>();
  let stopping = false;
  const outcome = { cleanExits: true };
  let allExited: (() => void) | undefined;

  const start = (slot: Slot): void => {
    const worker = cluster.fork();
    slot.worker = worker;
    slot.startedAt = Date.now();
    logger.info({ worker: worker.id, pid: worker.process.pid }, 'api worker started');
  };

  cluster.on('exit', (worker, code, signal) => {
    const slot = slots.find((candidate) => candidate.worker === worker);
    if (slot === undefined) return;
    slot.worker = undefined;
    const exit = { worker: worker.id, pid: worker.process.pid, code, signal };
    if (stopping) {
      if (code !== 0) outcome.cleanExits = false;
      logger.info(exit, 'api worker stopped');
      if (slots.every((each) => each.worker === undefined)) allExited?.();
      return;
    }
    if (Date.now() - slot.startedAt >= HEALTHY_LIFETIME_MS) slot.failures = 0;
    const delay = Math.min(RESTART_MAX_DELAY_MS, RESTART_FIRST_DELAY_MS * 2 ** slot.failures);
    slot.failures += 1;
    restarts.inc();
    logger.error({ ...exit, restartInMs: delay }, 'api worker exited; starting another');
    const timer = setTimeout(() => {
      pendingRestarts.delete(timer);
      start(slot);
    }, delay);
    pendingRestarts.add(timer);
  });

  for (const slot of slots) start(slot);
  logger.info({ workers: options.workers }, 'api primary started');
  await stopRequested;
  stopping = true;
  for (const timer of pendingRestarts) clearTimeout(timer);
  const exited = new Promise<void>((resolve) => (allExited = resolve));
  const running = slots.flatMap((slot) => (slot.worker === undefined ? [] : [slot.worker]));
  logger.info({ workers: running.length }, 'api draining');
  // Straight to the process, not worker.kill(): that disconnects first, and a worker drains with
  // its channel open (a scrape during the drain still reaches the others' metrics).
  for (const worker of running) worker.process.kill('SIGTERM');
  if (running.length > 0) await exited;
  return outcome.cleanExits ? 0 : 1;
}
