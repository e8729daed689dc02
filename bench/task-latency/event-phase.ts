// The live-event phase under CPU load: busy loops started beside it, then per round the pipe floor
// and the clock task through the whole stack, with where each event's time went.
import { setTimeout as sleep } from 'node:timers/promises';
import { loadAverage as load } from '../support/format.js';
import { progress } from '../support/stats.js';
import { startBusyLoops } from './busy-load.js';
import { cpuNow, cpuSpent } from './cpu.js';
import type { Client } from './client.js';
import { reportEvents } from './clock.js';
import type { EventRun } from './clock.js';
import { BUSY_LOOPS, EVENT_RATE, EVENT_ROUNDS, TRACE } from './config.js';
import { pipeFloor } from './floors.js';
import { reportHops } from './hops.js';
import { liveEvents } from './live-events.js';
import { ms } from './report.js';

export interface EventPhase {
  pipe: EventRun;
  live: EventRun;
}

/** The round with the median end-to-end p99 (the figures printed for it stand for the phase). */
function medianRound(rounds: EventPhase[]): EventPhase {
  const sorted = [...rounds].sort((a, b) => a.live.latency.p99 - b.live.latency.p99);
  const median = sorted[Math.floor((sorted.length - 1) / 2)];
  if (median === undefined) throw new Error('no live-event round ran');
  return median;
}

/** The live-event rounds with BUSY_LOOPS busy-looping processes beside them; the load is stopped on the way out. */
export async function liveEventPhase(dir: string, client: Client, workspaceId: string): Promise<EventPhase> {
  const stopLoad = startBusyLoops(BUSY_LOOPS);
  const rounds: EventPhase[] = [];
  try {
    console.log(`live events: ${BUSY_LOOPS} busy-loop processes beside them; load average ${load()}`);
    for (let round = 1; round <= EVENT_ROUNDS; round++) {
      progress(`live events, round ${round}/${EVENT_ROUNDS}`);
      const pipe = await pipeFloor();
      reportEvents(`floor: clock script → direct pipe at ${EVENT_RATE}/s`, pipe);
      const before = await cpuNow();
      const live = await liveEvents(client, workspaceId);
      const cpu = cpuSpent(before, await cpuNow());
      reportEvents(`live events: runner → SSE client at ${EVENT_RATE}/s`, live.run);
      const perThousand = (cpuMs: number): string => ms((cpuMs / live.run.received) * 1000);
      console.log(
        `  CPU per 1,000 events: API process (API, operator, client) ${perThousand(cpu.api)}, runner ${perThousand(cpu.runners)}`,
      );
      if (TRACE) {
        await sleep(500); // the runner appends its marks every 200 ms
        await reportHops(dir, live.taskId, live.samples);
      }
      rounds.push({ pipe, live: live.run });
    }
  } finally {
    await stopLoad();
  }
  if (rounds.length > 1) {
    const p99s = rounds.map((r) => ms(r.live.latency.p99)).join(', ');
    console.log(`live events p99 per round: ${p99s}; load average ${load()}`);
  }
  return medianRound(rounds);
}
