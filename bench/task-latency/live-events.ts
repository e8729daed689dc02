// Live event latency: a `shell` task running the clock script, each `text` event's content (the
// producer's wall clock) against the client's wall clock on arrival.
import { z } from 'zod';
import { TaskEventSchema } from '../../platform/runner-protocol.js';
import { call } from '../../test/support/api-server.js';
import { within } from '../support/wait.js';
import { createTask, readEvents } from './client.js';
import type { Client } from './client.js';
import { CLOCK_SCRIPT, ClockLines } from './clock.js';
import type { EventRun } from './clock.js';
import type { ClockSample } from './hops.js';
import { EVENT_COUNT, EVENT_SECONDS, TIMEOUT_MS, interruption } from './config.js';

export interface LiveRun {
  run: EventRun;
  taskId: string;
  samples: ClockSample[];
}

export async function liveEvents(client: Client, workspaceId: string): Promise<LiveRun> {
  const lines = new ClockLines();
  const samples: ClockSample[] = [];
  let taskId = '';
  await within('the clock task', TIMEOUT_MS + EVENT_SECONDS * 1000, interruption.signal, async (signal) => {
    const task = await createTask(client, { prompt: `python3 -c '${CLOCK_SCRIPT}'`, workspaceId });
    taskId = task.id;
    const seqs: number[] = [];
    let promptId: string | undefined;
    const done = await readEvents(client, task.id, signal, (event, arrival) => {
      seqs.push(event.seq);
      promptId ??= event.promptId;
      if (event.eventType !== 'text') return;
      const content = event.payload.content;
      if (typeof content !== 'string') throw new Error('a text event without content');
      if (event.payload.stream === 'stderr') throw new Error(`the clock script wrote to stderr: ${content}`);
      lines.add(content, arrival);
      samples.push({ seq: event.seq, printed: Number(content) / 1e6, arrival });
    });
    if (done.status !== 'completed') throw new Error(`the clock task ended ${done.status}, not completed`);
    if (lines.latencies.length !== EVENT_COUNT) {
      // Evidence for a report: what the stream delivered against what the runner recorded.
      const gaps = seqs.filter((seq, i) => i > 0 && seq !== (seqs[i - 1] ?? -1) + 1).length;
      let recorded = 'unknown';
      if (promptId !== undefined) {
        const res = await call(client.api, `/v1/tasks/${task.id}/prompts/${promptId}/events`, {
          key: client.key,
        });
        const page = z
          .object({ events: z.array(TaskEventSchema), lastSeq: z.number() })
          .safeParse(await res.json());
        recorded = page.success
          ? `${page.data.events.filter((e) => e.eventType === 'text').length} text events, lastSeq ${page.data.lastSeq}`
          : `unreadable (${res.status})`;
      }
      console.log(
        `  the stream had ${seqs.length} events, seq ${seqs[0] ?? '-'}…${seqs.at(-1) ?? '-'} with ${gaps} gaps; ` +
          `done.lastSeq ${done.lastSeq}; the prompt's recorded events now: ${recorded}`,
      );
    }
  });
  return { run: lines.result(), taskId, samples };
}
