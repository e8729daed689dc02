// Workspace start and resume (issue 18): on each runtime, in one run, POST /v1/tasks → the task's
// first `init` event on GET /v1/tasks/:id/events (the runner's first event of a prompt), for
//   - existing: a task given the id of a running workspace (the floor every other phase is divided by);
//   - cold:     a task without workspaceId and no pool: a new workspace is made (deleted after);
//   - wake:     a task given the id of a hibernated workspace (POST /stop until hibernated first);
//   - claim:    a task without workspaceId while the organization has a full WorkspacePool: it claims
//               a ready member; each round pairs it with a task on the running workspace, in
//               alternating order, each timed after the pool refilled, the node settled (no Pod or
//               disk starting or stopping) and a pause: the claims' floor, under the same conditions;
//   - burst:    a full pool refilling while tasks without workspaceId arrive at a fixed rate (open
//               loop): p50/p95/p99 of every claim, and how many fell back to a cold start (a claimed
//               member keeps agentry.dev/workspace-pool and has agentry.dev/pool-member=claimed).
// Runtimes: the embedded default (process runtime, in this process as bench:tasks runs it) and the
// pod runtime on the real node (root: a kubelet and containerd on this machine, as bench:real-node).
// KubeVirt is left out: on KWOK stages it would only time fake VMs.
// Each table row carries the load average when its phase ended: other work on the machine shows there.
// Progress goes to stderr, figures (Markdown) to stdout.
//
// Run: npm run bench:workspace-start
// Env: BENCH_RUNTIMES     embedded,real-node (default both; real-node needs root and no other real node)
//      BENCH_PHASES       some of existing,first,cold,wake,claim,burst (default all)
//      BENCH_N            tasks per sequential phase, embedded (default 20)
//      BENCH_WARMUP       untimed tasks before each sequential phase (default 1)
//      BENCH_CLAIM_POOL   the claim phase's pool size, embedded (default 3)
//      BENCH_BURST_POOL, BENCH_BURST_CLAIMS, BENCH_BURST_RATE
//                         the burst, embedded: pool 20, 100 claims at 10/s
//      BENCH_REAL_NODE_N, BENCH_REAL_NODE_CLAIM_POOL, BENCH_REAL_NODE_BURST_POOL,
//      BENCH_REAL_NODE_BURST_CLAIMS, BENCH_REAL_NODE_BURST_RATE
//                         the same on the real node: 10, 2, pool 3, 8 claims at 1/s (2 cores fit ~6 workspaces)
//      BENCH_REAL_NODE_POOL_CPU
//                         the CPU a real-node pool member asks for and is limited to (default: the chart's)
//      BENCH_SETTLE_MS, BENCH_REAL_NODE_SETTLE_MS
//                         the bound on a pool filling or a workspace hibernating (120 s, 300 s)
//      BENCH_PAUSE_MS     the claim phase's quiet time before each timed task (default 2000)
//      BENCH_TIMEOUT_MS   one task, POST to done (default 60000)
//      BENCH_TRACE        0: no per-hop event marks in the runners (bench:tasks's; default on)
//      BENCH_LOG_LEVEL    the embedded stack's log level (default silent); on the real node, the chart's
//                         logLevel of the installed API and operator (default: the chart's)
//      BENCH_REAL_NODE_LOGS
//                         a directory the real node's Pod logs are copied to before teardown (the
//                         workspace Pods' every 0.5 s during the run: a claimed member's goes with it);
//                         with BENCH_LOG_LEVEL=debug, claim-hops.ts splits each task's time from them
import { availableParallelism } from 'node:os';
import { loadAverage } from '../support/format.js';
import { interruption } from '../task-latency/config.js';
import { RUNTIMES } from './config.js';
import { onEmbedded } from './embedded.js';
import { measureTarget } from './measure.js';
import { onRealNode } from './real-node.js';

let passed = false;
try {
  console.log(
    `## Workspace start and resume: ${RUNTIMES.join(', ')}; ${availableParallelism()} CPUs, node ${process.version}, load average ${loadAverage()}`,
  );
  for (const runtime of RUNTIMES) {
    if (runtime === 'embedded') await onEmbedded((target) => measureTarget(target, 'embedded'));
    else await onRealNode((target) => measureTarget(target, 'real-node'));
  }
  console.log(`\nload average at the end: ${loadAverage()}`);
  passed = true;
} catch (err) {
  console.error('\nbenchmark failed:', err);
} finally {
  interruption.dispose();
}
process.exitCode = passed ? 0 : 1;
