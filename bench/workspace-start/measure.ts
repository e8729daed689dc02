// Every chosen phase on one runtime, in the order that keeps them apart: the running workspace and
// the cold starts before any pool exists, then the pool's claims, then its burst; then the table.
import type { Summary } from '../support/stats.js';
import { progress } from '../support/stats.js';
import { loadAverage } from '../support/format.js';
import { burstPhase } from './burst.js';
import { PHASES } from './config.js';
import { claimPhase, coldPhase, existingPhase, firstPromptPhase, wakePhase } from './phases.js';
import { removePool } from './pool.js';
import { printGoals, printTable, row } from './report.js';
import type { Row } from './report.js';
import type { Target } from './target.js';
import { createWorkspace, deleteWorkspace, waitForStatus } from './workspaces.js';

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** The phases before any pool: existing, cold, wake (on one persistent workspace made here). */
async function withoutPool(target: Target, rows: Row[], asides: string[]): Promise<Summary | undefined> {
  let floor: Summary | undefined;
  if (PHASES.has('existing') || PHASES.has('wake')) {
    progress('a persistent workspace for the existing and wake phases');
    const id = await createWorkspace(target.endpoint);
    await waitForStatus(target.endpoint, id, 'ready', target.sizes.settleMs);
    if (PHASES.has('existing')) {
      progress('existing workspace');
      rows.push(row('existing: a running workspace (the floor)', (await existingPhase(target, id)).init));
      floor = rows.at(-1)?.summary;
    }
    if (PHASES.has('wake')) {
      progress('wake: hibernated workspace');
      const wake = await wakePhase(target, id);
      rows.push(row('wake: a hibernated workspace', wake.init));
      if (wake.timeline !== undefined) asides.push(`the last wake: ${wake.timeline}`);
    }
    // Its CPU and memory go back to the node before the cold starts and the pool need them.
    await deleteWorkspace(target, id);
  }
  if (PHASES.has('first')) {
    progress('first prompt: new workspaces made ready first');
    rows.push(
      row('first prompt: a new workspace, ready before the POST', (await firstPromptPhase(target)).init),
    );
  }
  if (PHASES.has('cold')) {
    progress('cold: new workspaces, no pool');
    const cold = await coldPhase(target);
    rows.push(row('cold: a new workspace, no pool', cold.init));
    if (cold.timeline !== undefined) asides.push(`the last cold start: ${cold.timeline}`);
  }
  return floor;
}

/** The pool phases: sequential claims from a full pool, then the burst. */
async function withPool(target: Target, rows: Row[]): Promise<Summary | undefined> {
  const { claimPool, burstPool, burstClaims, burstRate } = target.sizes;
  let claim: Summary | undefined;
  try {
    if (PHASES.has('claim')) {
      progress(`pool claim: pool of ${claimPool}`);
      const { init, cold } = await claimPhase(target);
      rows.push(row(`pool claim: a full pool of ${claimPool}`, init, `cold fallbacks: ${cold ?? 0}`));
      claim = rows.at(-1)?.summary;
    }
    if (PHASES.has('burst')) {
      const b = await burstPhase(target);
      const what = `burst: pool of ${burstPool}, ${burstClaims} claims at ${burstRate}/s`;
      const note =
        `cold fallbacks: ${b.cold.length} of ${b.all.length}, failed: ${b.failed}, ` +
        `fewest ready members: ${b.fewestReady}, first POST → last done: ${seconds(b.spanMs)}`;
      rows.push(row(`${what}, every claim`, b.all, note));
      rows.push(row('burst: claimed from the pool', b.claimed));
      rows.push(row('burst: cold fallbacks', b.cold));
    }
  } finally {
    await removePool(target);
  }
  return claim;
}

/** Every chosen phase, then the table; a phase that fails ends the run, after the table of those before it. */
export async function measureTarget(target: Target, kind: 'embedded' | 'real-node'): Promise<void> {
  const loadBefore = loadAverage();
  const rows: Row[] = [];
  const asides: string[] = [];
  let floor: Summary | undefined;
  let claim: Summary | undefined;
  try {
    floor = await withoutPool(target, rows, asides);
    if (PHASES.has('claim') || PHASES.has('burst')) claim = await withPool(target, rows);
  } finally {
    printTable(`${target.label} (load average before: ${loadBefore})`, rows, floor);
    for (const aside of asides) console.log(`- ${aside}`);
    if (floor !== undefined && claim !== undefined) printGoals(claim, floor, kind);
  }
}
