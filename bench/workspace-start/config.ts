// The run's settings (see main.ts for what each means).
import { z } from 'zod';
import { LogLevelSchema, envCount, envNumber } from '../support/env.js';

const PhaseSchema = z.enum(['existing', 'first', 'cold', 'wake', 'claim', 'burst']);
export type Phase = z.infer<typeof PhaseSchema>;
const RuntimeChoiceSchema = z.enum(['embedded', 'real-node']);
export type RuntimeChoice = z.infer<typeof RuntimeChoiceSchema>;

/** A comma-separated list of `schema`'s values, or every value when unset or empty. */
function envList<T extends string>(name: string, schema: z.ZodEnum<Record<T, T>>): T[] {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return schema.options;
  const parsed = z.array(schema).safeParse(raw.split(',').map((item) => item.trim()));
  if (!parsed.success) throw new Error(`${name} must list some of ${schema.options.join(', ')}, not ${raw}`);
  return parsed.data;
}

export const RUNTIMES = envList('BENCH_RUNTIMES', RuntimeChoiceSchema);
export const PHASES = new Set(envList('BENCH_PHASES', PhaseSchema));

/** How big each phase is on one runtime. */
export interface Sizes {
  /** Tasks timed per sequential phase (existing, cold, wake, claim), after `warmup` untimed ones. */
  n: number;
  warmup: number;
  /** minReady of the pool the sequential claims take from. */
  claimPool: number;
  /** minReady (and maxReady) of the pool the burst drains. */
  burstPool: number;
  /** Claims (POST /v1/tasks without workspaceId) of the burst, and how many arrive per second. */
  burstClaims: number;
  burstRate: number;
  /** How long to wait for a pool to fill, and for one workspace to hibernate or become ready. */
  settleMs: number;
  /** The claim phase's quiet time before each timed task, once the node has settled. */
  pauseMs: number;
}

export const EMBEDDED_SIZES: Sizes = {
  n: envCount('BENCH_N', 20),
  warmup: envCount('BENCH_WARMUP', 1, 0),
  claimPool: envCount('BENCH_CLAIM_POOL', 3),
  burstPool: envCount('BENCH_BURST_POOL', 20),
  burstClaims: envCount('BENCH_BURST_CLAIMS', 100),
  burstRate: Math.max(0.1, envNumber('BENCH_BURST_RATE', 10)),
  settleMs: envCount('BENCH_SETTLE_MS', 120_000),
  pauseMs: envCount('BENCH_PAUSE_MS', 2_000, 0),
};

/**
 * The real node has 2 cores and every workspace Pod asks for (and is limited to) the chart's 250m:
 * about 6 fit beside the control plane, so a pool of 20 and 100 cold fallbacks cannot be scheduled
 * there, and its burst is smaller unless asked otherwise.
 */
export const REAL_NODE_SIZES: Sizes = {
  n: envCount('BENCH_REAL_NODE_N', 10),
  warmup: envCount('BENCH_WARMUP', 1, 0),
  // One more than the real node's API replicas (2): each holds a claim reserved ahead and one member
  // stays for the others (docs/workspace-pools.md#claims-reserved-ahead), as the docs size a pool.
  claimPool: envCount('BENCH_REAL_NODE_CLAIM_POOL', 3),
  burstPool: envCount('BENCH_REAL_NODE_BURST_POOL', 3),
  burstClaims: envCount('BENCH_REAL_NODE_BURST_CLAIMS', 8),
  burstRate: Math.max(0.1, envNumber('BENCH_REAL_NODE_BURST_RATE', 1)),
  settleMs: envCount('BENCH_REAL_NODE_SETTLE_MS', 300_000),
  pauseMs: envCount('BENCH_PAUSE_MS', 2_000, 0),
};

/**
 * The CPU a real-node pool member asks for; unset: the chart's, as every other workspace (a Pod's
 * limit equals its request, so a smaller one would make claimed members slower than the floor).
 */
export const REAL_NODE_POOL_CPU = process.env.BENCH_REAL_NODE_POOL_CPU || undefined;
/** The organization's limits during a run: every burst task runs at once, and its workspace counts. */
export const ORGANIZATION_LIMITS = { agentComputers: 1000, concurrentTasks: 1000 };
/** The name of the pool the bench makes in the organization's namespace. */
export const BENCH_POOL = 'bench';

/** The installed API's and operator's log level on the real node (the chart's `logLevel`); unset: the chart's. */
export const REAL_NODE_LOG_LEVEL = LogLevelSchema.optional().parse(process.env.BENCH_LOG_LEVEL || undefined);
/** Where the real node's Pod logs are copied before it is torn down; unset: not kept. */
export const REAL_NODE_LOGS_DIR = process.env.BENCH_REAL_NODE_LOGS || undefined;
