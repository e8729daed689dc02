// Every chosen phase on one runtime, in the order that keeps them apart: the running workspace and
// the cold starts before any pool exists, then the pool's claims (each paired with a task on the
// running workspace), then its burst; then the table.
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

/** A running workspace for the existing, wake and claim phases, when one of them is chosen. */
async function persistentWorkspace(target: Target): Promise<string | undefined> {
  if (!PHASES.has('existing') && !PHASES.has('wake') && !PHASES.has('claim')) return undefined;
  progress('a persistent workspace for the existing, wake and claim phases');
  const id = await createWorkspace(target.endpoint);
  await waitForStatus(target.endpoint, id, 'ready', target.sizes.settleMs);
  return id;
}

/** The phases before any pool: existing, wake (on the persistent workspace), first, cold. */
async function withoutPool(
  target: Target,
  persistent: string | undefined,
  rows: Row[],
  asides: string[],
): Promise<Summary | undefined> {
  let floor: Summary | undefined;
  if (persistent !== undefined && PHASES.has('existing')) {
    progress('existing workspace');
    rows.push(
      row(
        'existing: a running workspace, back to back (the floor)',
        (await existingPhase(target, persistent)).init,
      ),
    );
    floor = rows.at(-1)?.summary;
  }
  if (persistent !== undefined && PHASES.has('wake')) {
    progress('wake: hibernated workspace');
    const wake = await wakePhase(target, persistent);
    rows.push(row('wake: a hibernated workspace', wake.init));
    if (wake.timeline !== undefined) asides.push(`the last wake: ${wake.timeline}`);
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

/** The claim and its paired floor, as the goals compare them. */
interface ClaimFigures {
  claim: Summary;
  paired: Summary;
}

/** The sequential claims (each paired with a task on the persistent workspace), then the burst. */
async function withPool(
  target: Target,
  persistent: string | undefined,
  rows: Row[],
): Promise<ClaimFigures | undefined> {
  const { claimPool, burstPool, burstClaims, burstRate } = target.sizes;
  let figures: ClaimFigures | undefined;
  try {
    if (persistent !== undefined && PHASES.has('claim')) {
      progress(`pool claim: pool of ${claimPool}, each claim paired with a task on a running workspace`);
      const { init, cold, paired, split } = await claimPhase(target, persistent);
      const pairedRow = row(
        'existing: a running workspace, in the claim rounds',
        paired,
        "the claims' floor",
      );
      const claimRow = row(`pool claim: a full pool of ${claimPool}`, init, `cold fallbacks: ${cold ?? 0}`);
      rows.push(pairedRow, claimRow);
      rows.push(row('aside: POST answered, existing in the claim rounds', split.paired.post));
      rows.push(row('aside: POST answered, claim', split.claim.post));
      rows.push(
        row(
          "aside: POST → the runner's stamp on init, existing in the claim rounds",
          split.paired.initStamped,
        ),
      );
      rows.push(row("aside: POST → the runner's stamp on init, claim", split.claim.initStamped));
      figures = { claim: claimRow.summary, paired: pairedRow.summary };
    }
    // Its CPU and memory go back to the node before the burst needs them.
    if (persistent !== undefined) await deleteWorkspace(target, persistent);
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
  return figures;
}

/** Every chosen phase, then the table; a phase that fails ends the run, after the table of those before it. */
export async function measureTarget(target: Target, kind: 'embedded' | 'real-node'): Promise<void> {
  const loadBefore = loadAverage();
  const rows: Row[] = [];
  const asides: string[] = [];
  let floor: Summary | undefined;
  let claim: ClaimFigures | undefined;
  try {
    const persistent = await persistentWorkspace(target);
    floor = await withoutPool(target, persistent, rows, asides);
    if (PHASES.has('claim') || PHASES.has('burst')) claim = await withPool(target, persistent, rows);
    else if (persistent !== undefined) await deleteWorkspace(target, persistent);
  } finally {
    printTable(`${target.label} (load average before: ${loadBefore})`, rows, floor);
    for (const aside of asides) console.log(`- ${aside}`);
    if (claim !== undefined) printGoals(claim.claim, claim.paired, kind, floor);
  }
}
