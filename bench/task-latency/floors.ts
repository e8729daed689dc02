// Floors and asides: what a process spawn, a pipe, a bare runner start and a durable append cost on
// this machine, with no platform in between.
import { mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import { REPOSITORY_RUNNER_COMMAND } from '../../test/support/runner-command.js';
import { spawnLines, wallMs } from '../support/child.js';
import { summarize } from '../support/stats.js';
import type { Summary } from '../support/stats.js';
import { within } from '../support/wait.js';
import { CLOCK_SCRIPT, ClockLines } from './clock.js';
import type { EventRun } from './clock.js';
import { EVENT_SECONDS, TASKS, TIMEOUT_MS, WARMUP, interruption } from './config.js';

export async function bashFloor(): Promise<Summary> {
  const samples: number[] = [];
  for (let i = 0; i < WARMUP + TASKS; i++) {
    const start = wallMs();
    let first: number | undefined;
    await within('bash -c "echo ready"', TIMEOUT_MS, interruption.signal, (signal) =>
      spawnLines(
        'bash',
        ['-c', 'echo ready'],
        (line, arrival) => {
          if (line === 'ready') first ??= arrival;
          return undefined;
        },
        { signal },
      ),
    );
    if (first === undefined) throw new Error('bash -c "echo ready" printed no "ready" line');
    if (i >= WARMUP) samples.push(first - start);
  }
  return summarize(samples);
}

export async function pipeFloor(): Promise<EventRun> {
  const lines = new ClockLines();
  await within(
    'the clock script spawned directly',
    TIMEOUT_MS + EVENT_SECONDS * 1000,
    interruption.signal,
    (signal) =>
      spawnLines(
        'python3',
        ['-c', CLOCK_SCRIPT],
        (line, arrival) => {
          lines.add(line, arrival);
          return undefined;
        },
        { signal },
      ),
  );
  return lines.result();
}

/**
 * What a new workspace's runner process costs before the operator can use it: `agentry runner` as the
 * process runtime starts it (from this repository's TypeScript, compiled on load), spawn → its
 * listening line on stdout. The runtime itself finds that line by polling the runner's log file.
 */
export async function runnerStartFloor(dir: string, count: number): Promise<Summary> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const home = join(dir, `runner-start-${i}`);
    await mkdir(join(home, 'code'), { recursive: true });
    const env = {
      ...process.env,
      AGENTRY_RUNNER_TOKEN: 'b'.repeat(48),
      AGENTRY_RUNNER_PORT: '0',
      AGENTRY_RUNNER_HOST: '127.0.0.1',
      AGENTRY_RUNNER_WORKDIR: join(home, 'code'),
      AGENTRY_RUNNER_STATE_DIR: join(home, 'state'),
      AGENTRY_LOG_LEVEL: 'silent',
    };
    const start = wallMs();
    let listening: number | undefined;
    await within('agentry runner to print its listening line', TIMEOUT_MS, interruption.signal, (signal) =>
      spawnLines(
        REPOSITORY_RUNNER_COMMAND.command,
        REPOSITORY_RUNNER_COMMAND.args,
        (line, arrival) => {
          if (!line.includes('agentry runner listening on ')) return undefined;
          listening = arrival - start;
          return 'stop';
        },
        { signal, cwd: home, env, stderr: 'ignore', killOnStop: true },
      ),
    );
    if (listening === undefined) throw new Error('agentry runner ended before listening');
    samples.push(listening);
  }
  return summarize(samples);
}

/** What one durable event costs the runner's log on this disk: an append and an fdatasync. */
export async function appendSyncFloor(dir: string): Promise<Summary> {
  const file = await open(join(dir, 'append-sync.jsonl'), 'a', 0o600);
  const line = `${JSON.stringify({ seq: 0, timestamp: new Date().toISOString(), promptId: 'x', eventType: 'text', payload: { content: '1234567890123456789', stream: 'stdout' } })}\n`;
  const samples: number[] = [];
  try {
    for (let i = 0; i < 1000; i++) {
      const start = performance.now();
      await file.appendFile(line, 'utf8');
      await file.datasync();
      samples.push(performance.now() - start);
    }
  } finally {
    await file.close();
  }
  return summarize(samples);
}
