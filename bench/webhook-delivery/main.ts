// Webhook delivery (operator/webhook) on the embedded store, each figure against a floor measured in
// the same run:
// - signing cost per delivery: WebhookSigningKeys.sign (Ed25519, Standard Webhooks `v1a`) of a real
//   delivery body, with one key and with two during a rotation, against Standard Webhooks' symmetric
//   `v1` scheme (HMAC-SHA256) over the same bytes;
// - delivery, transition → receiver: BENCH_WEBHOOKS webhooks (each its own loopback receiver answering
//   200 at once) subscribed to every event, and BENCH_TRANSITIONS task transitions (tasks × 5:
//   created, running, completed, a follow-up prompt running, completed) whose outbox entries are
//   written as the Task reconciler writes them (transitionEvents + outboxEntriesFor, in the status
//   write of the transition, at the version read, retried on Conflict); the delivery controller runs
//   on a ControllerManager as in the operator. Latency is from a high-resolution timestamp taken right
//   before the (successful) status write to the receiver having read the whole request (same
//   process, same clock). Twice: with the transitions written as fast as BENCH_WRITERS writers can
//   (the load), and paced at BENCH_RATE transitions/s (latency without a backlog);
// - floor: the same requests (bytes and headers the receivers got), POSTed by this process with
//   node:http straight to the same receivers, each released at the time its transition was written
//   in the measured run, with the controller's concurrency (4 in flight per webhook) and its
//   connection policy (a new connection per attempt);
// - asides: one status write on a quiet store (the store serializes writes: the bound on the rest),
//   the backlog case (all outboxes written with the controller stopped, then started), the raw POST
//   capacity at a few concurrency levels (and with keep-alive), and per phase the controller's
//   reconciles, its status writes and conflicts per delivery (counted by a wrapper around the store)
//   and the warnings it logged.
// Every delivery is checked to arrive exactly once (by webhook-id) and every outbox to drain.
// The receivers, the floor's client and the controller share this process (and its event loop).
// Progress goes to stderr, figures to stdout; the load average is printed at the start and the end.
//
// Run: npm run bench:webhooks
// Env: BENCH_TRANSITIONS   task transitions per phase (default 1000)
//      BENCH_WEBHOOKS      webhooks, each with its own receiver (default 3)
//      BENCH_SIGNS         signatures per signing measurement (default 10000)
//      BENCH_WRITERS       concurrent transition writers, as the Task controller's workers (default 4)
//      BENCH_RATE          transitions/s of the paced phase (default 50, i.e. 150 deliveries/s with 3
//                          webhooks: below what the controller keeps up with on 2 cores; 0 skips it)
//      BENCH_TIMEOUT_MS    one phase, from its first write to its last delivery (default 120000)
//      BENCH_LOG_LEVEL     the controller's log on stderr at this level (default: none; its warnings
//                          and errors are counted either way)
import { availableParallelism } from 'node:os';
import { loadAverage as load, ms, ratio } from '../support/format.js';
import { progress, summarize } from '../support/stats.js';
import { capacityRuns, reportWebhooks, storeWriteAside } from './asides.js';
import {
  DELIVERIES,
  DELIVERY_WORKERS,
  PER_WEBHOOK_CONCURRENCY,
  RATE,
  STEPS_PER_TASK,
  TASKS,
  TRANSITIONS,
  WEBHOOKS,
  WRITERS,
  interruption,
} from './config.js';
import { checkFailed, checkLine, reportAgainstFloor } from './deliveries.js';
import type { DeliveryRun } from './deliveries.js';
import { setUp, startDelivery, tearDown } from './environment.js';
import { replayFloor } from './floor.js';
import { backlogPhase, livePhase } from './phases.js';
import type { Phase } from './phases.js';
import { signingPhase, verifySample } from './signing.js';
import type { Signing } from './signing.js';

interface Results {
  signing: Signing;
  fast: Phase;
  fastFloor: DeliveryRun;
  paced: { phase: Phase; floor: DeliveryRun } | undefined;
  backlog: DeliveryRun;
  /** At 1, 4 and 16 per webhook, then keep-alive. */
  capacity: { label: string; run: DeliveryRun }[];
}

/** Both live phases on one controller: unpaced, then paced (unless BENCH_RATE=0); each with its floor. */
async function livePhases(): Promise<Pick<Results, 'fast' | 'fastFloor' | 'paced'>> {
  progress('delivery, transitions as fast as they are written');
  const manager = await startDelivery();
  const fast = await livePhase('delivery, unpaced', 'fast', 0);
  const sizes = summarize([...fast.requests.values()].map((r) => Buffer.byteLength(r.body)));
  console.log(
    `  bodies: p50 ${sizes.p50} bytes, max ${sizes.max}; signatures verified with the published key: ` +
      `${await verifySample(fast.requests, 30)} sampled`,
  );
  progress('floor for the unpaced run');
  const fastFloor = await replayFloor(fast);
  let paced: Results['paced'];
  if (RATE > 0) {
    progress(`delivery, paced at ${RATE} transitions/s`);
    const phase = await livePhase(`delivery, paced at ${RATE} transitions/s`, 'paced', RATE);
    progress('floor for the paced run');
    paced = { phase, floor: await replayFloor(phase) };
  }
  await manager.stop();
  return { fast, fastFloor, paced };
}

async function measure(): Promise<Results> {
  progress('setting up');
  await setUp();
  progress('store writes');
  const writeCost = await storeWriteAside(300);
  console.log(
    `aside: one Task status write, sequential, on a quiet store: p50 ${ms(writeCost.p50)}, p99 ${ms(writeCost.p99)} ` +
      `(≈ ${(1000 / writeCost.p50).toFixed(0)} writes/s at most; the store serializes writes)`,
  );
  progress('signing');
  const signing = await signingPhase();
  const live = await livePhases();
  progress('backlog');
  const backlog = await backlogPhase('backlog');
  progress('raw POST capacity');
  const capacity = await capacityRuns(live.fast);
  await reportWebhooks();
  console.log(`load average at the end: ${load()}`);
  return { signing, ...live, backlog, capacity };
}

/** The summary's ratios and the exactly-once verdict; false when a phase failed its checks. */
function printSummary({ signing, fast, fastFloor, paced, backlog, capacity }: Results): boolean {
  const checks = [fast.run, fastFloor, paced?.phase.run, paced?.floor, backlog].filter(
    (run): run is DeliveryRun => run !== undefined,
  );
  const bad = checks.filter((run) => checkFailed(run.check, run.withoutId));
  console.log('\nsummary');
  console.log(
    `signing, Ed25519 / HMAC-SHA256: ${ratio(signing.ed25519, signing.hmac)} ` +
      `(${signing.ed25519.toFixed(1)} vs ${signing.hmac.toFixed(1)} µs); two keys / one: ${ratio(signing.rotation, signing.ed25519)}`,
  );
  const perDelivery = (fast.run.spanMs * 1000) / fast.run.timed.length;
  console.log(
    `signing share of the unpaced run's time per delivery: ${((signing.ed25519 / perDelivery) * 100).toFixed(1)}% ` +
      `(${signing.ed25519.toFixed(0)} µs of ${perDelivery.toFixed(0)} µs)`,
  );
  reportAgainstFloor('unpaced delivery / floor', fast.run, fastFloor);
  if (paced !== undefined) reportAgainstFloor('paced delivery / floor', paced.phase.run, paced.floor);
  const atFour = capacity[1]?.run;
  if (atFour !== undefined)
    console.log(
      `backlog drain / raw POST capacity at ${PER_WEBHOOK_CONCURRENCY} per webhook: ` +
        ratio(backlog.timed.length / backlog.spanMs, atFour.timed.length / atFour.spanMs),
    );
  console.log(
    bad.length === 0
      ? 'every delivery arrived exactly once in every phase; every outbox drained'
      : `PROBLEMS: ${bad.map((run) => `${run.label}: ${checkLine(run.check, run.withoutId)}`).join('; ')}`,
  );
  return bad.length === 0;
}

let passed = false;
try {
  console.log(
    `webhook delivery: ${TRANSITIONS} transitions (${TASKS} tasks × ≤${STEPS_PER_TASK}) × ${WEBHOOKS} webhooks = ` +
      `${DELIVERIES} deliveries per phase; ${WRITERS} transition writers; controller defaults ` +
      `(${DELIVERY_WORKERS} workers, ${PER_WEBHOOK_CONCURRENCY} in flight per webhook); ` +
      `${availableParallelism()} CPUs, node ${process.version}, load average ${load()}`,
  );
  passed = printSummary(await measure());
} catch (err) {
  console.error('\nbenchmark failed:', err);
} finally {
  await tearDown();
  interruption.dispose();
}
process.exitCode = passed ? 0 : 1;
