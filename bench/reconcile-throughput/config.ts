// The run's settings (see main.ts for what each means) and the sizes of what it creates.

export const N = Number(process.env.BENCH_N ?? 500);
export const WORKERS = (process.env.BENCH_WORKERS ?? '16').split(',').map((w) => Number(w.trim()));
/** kwok (default): a KWOK cluster, baseline Pods vs AgentComputers; embedded: see embedded.ts. */
export const STORE = process.env.BENCH_STORE === 'embedded' ? 'embedded' : 'kwok';
/** Tasks spread over the AgentComputers, embedded mode only (default N). */
export const TASKS = Number(process.env.BENCH_TASKS ?? N);
export const KEEPALIVE = process.env.BENCH_KEEPALIVE === '1';
/** The operator's store's connection pool (KubernetesStoreOptions.maxConnections); unset: its default. */
export const MAX_CONNECTIONS =
  process.env.BENCH_MAX_CONNECTIONS === undefined ? undefined : Number(process.env.BENCH_MAX_CONNECTIONS);
export const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
export const ORDER = process.env.BENCH_ORDER === 'measured-first' ? 'measured-first' : 'baseline-first';
export const POLL_MS = 250;
/** Gives up when no more become ready for this long (a failing reconcile backs off for minutes). */
export const STALL_MS = Number(process.env.BENCH_STALL_MS ?? 120_000);
/** Small enough that any number of them fit on the fake nodes. */
export const RESOURCES = { cpu: '10m', memory: '16Mi', disk: '1Gi' };
export const IMAGE = 'registry.invalid/agentry-runner:bench';
export const PODS_PER_NODE = 110;
