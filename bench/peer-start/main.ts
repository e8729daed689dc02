// Workspace start against the peer, on one KWOK cluster (test/cluster/harness) in one run, three
// phases of N each, in namespaces of their own:
// - bare: N PVC + Pod pairs created with client-node (the runner's pod template), no controller;
// - agent-sandbox: N Sandboxes (same pod template, a disk claim template, a Service) reconciled by
//   kubernetes-sigs/agent-sandbox's controller, built from Go modules, as a process of its own;
// - Agentry: N AgentComputers (pod runtime) reconciled by `agentry operator` as a process of its own,
//   compiled to dist/ first as `npm start` does.
// Each is timed from its first create until every one is ready (Pod Ready, Sandbox Ready condition,
// agentComputerStatus ready); the controllers' CPU seconds over that span and their memory are read
// from /proc; a watch of each phase's Pods says when they were created, Running and Ready (where the
// time goes). Rounds rotate which phase goes first; the table gives medians and, for the ratios, the
// median of the ratios taken within each round. Objects stay until the cluster goes at the end.
//
// Run: npm run bench:peer
// Env: BENCH_N            workspaces per phase (default 500, as bench:reconcile)
//      BENCH_PEER_ROUNDS  rounds of the three phases (default 1)
//      BENCH_CONCURRENCY  creates in flight, in every phase (default 16)
//      BENCH_STALL_MS     fail when no more become ready for this long (default 120000)
//      AGENTRY_TOOLS_CACHE, GO: as for build-binaries.sh (the peer is built with --only agent-sandbox)
import { envCount } from '../support/env.js';
import { loadAverage } from '../support/format.js';
import { startBenchCluster } from '../support/bench-cluster.js';
import { progress } from '../support/stats.js';
import { runBaseline } from '../reconcile-throughput/baseline.js';
import { addNodes, addServiceRange } from '../reconcile-throughput/cluster-setup.js';
import { N } from '../reconcile-throughput/config.js';
import { describePhase } from '../reconcile-throughput/phase.js';
import type { PhaseResult } from '../reconcile-throughput/phase.js';
import { buildAgentry, runAgentryPhase } from './agentry-phase.js';
import { buildPeerTools } from './peer-tools.js';
import { PodTimeline, TIMELINE_HEADER } from './pod-timeline.js';
import { printReport } from './report.js';
import type { Round } from './report.js';
import { installSandboxCrd, runSandboxPhase } from './sandbox-phase.js';

const ROUNDS = envCount('BENCH_PEER_ROUNDS', 1);
const PHASES = ['bare', 'sandbox', 'agentry'] as const;
type Phase = (typeof PHASES)[number];

/** Runs one phase of a round into `round`, its namespace named after `tag`. */
async function runPhase(phase: Phase, round: Partial<Round>, tag: string): Promise<PhaseResult> {
  if (phase === 'bare') {
    round.bare = await runBaseline(admin, cluster.kubeconfig, `peer-bare-${tag}`);
    describePhase(`bare (${N} PVC + Pod)`, round.bare);
    return round.bare;
  } else if (phase === 'sandbox') {
    round.sandbox = await runSandboxPhase(admin, cluster, peer, `peer-sandbox-${tag}`);
    describePhase(`agent-sandbox (${N} Sandboxes)`, round.sandbox);
    return round.sandbox;
  }
  round.agentry = await runAgentryPhase(admin, cluster, `peer-agentry-${tag}`);
  describePhase(`Agentry (${N} AgentComputers)`, round.agentry);
  return round.agentry;
}

/** A phase with its Pods' timeline: one row of the "where the time goes" table. */
async function runTimedPhase(
  phase: Phase,
  round: Partial<Round>,
  tag: string,
  label: string,
): Promise<string> {
  const timeline = await PodTimeline.watch(admin, `peer-${phase}-${tag}`);
  try {
    return timeline.describe(label, await runPhase(phase, round, tag));
  } finally {
    await timeline.stop();
  }
}

const loadBefore = loadAverage();
progress('building (or finding) agent-sandbox');
const peer = await buildPeerTools();
progress('building Agentry (tsc, as npm start does)');
await buildAgentry();
const { cluster, admin } = await startBenchCluster();
try {
  await addNodes(admin, PHASES.length * N * ROUNDS);
  await addServiceRange(admin);
  await installSandboxCrd(cluster, peer.crd);
  const rounds: Round[] = [];
  const timelines: string[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const round: Partial<Round> = {};
    const tag = `${r}-${Date.now().toString(36)}`;
    // Each round starts with the next phase, so none always runs on the emptiest cluster.
    for (const phase of [...PHASES.slice(r % PHASES.length), ...PHASES.slice(0, r % PHASES.length)]) {
      progress(`round ${r + 1}: ${phase}`);
      timelines.push(await runTimedPhase(phase, round, tag, `${phase}, round ${r + 1}`));
    }
    const { bare, sandbox, agentry } = round;
    if (bare === undefined || sandbox === undefined || agentry === undefined)
      throw new Error('a phase did not run');
    rounds.push({ bare, sandbox, agentry });
  }
  printReport(N, rounds, loadBefore);
  console.log(`\nWhere the time goes\n${TIMELINE_HEADER}\n${timelines.join('\n')}`);
} finally {
  await admin.close();
  await cluster.stop();
}
