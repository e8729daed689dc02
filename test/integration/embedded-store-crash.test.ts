// The embedded store under kill -9: a child process writes until killed at a random moment, and the
// store it leaves must hold every acknowledged write and at most the one in flight, never a torn file.
import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { SecretType } from '../../crds/core.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { ProbeType } from '../contracts/store/contract.js';
import { listFiles, secret, tempDir, version } from './embedded-store-support.js';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CRASH_ROUNDS = 25;

const StepSchema = z.object({
  event: z.enum(['ready', 'begin', 'ack']),
  op: z.enum(['create', 'replace', 'delete']).optional(),
  kind: z.enum(['Secret', 'Probe']).optional(),
  name: z.string().optional(),
  rv: z.string().optional(),
  size: z.number().optional(),
  pid: z.number().optional(),
});
type Step = z.infer<typeof StepSchema>;

/** What the store must hold for one object: its version and payload size, or nothing. */
type Expected = { rv: number; size: number } | 'absent';

/**
 * Runs the crash writer on `dir` and SIGKILLs it `delayMs` after its first acknowledged write.
 * Returns its pid and every line it printed (a pipe write of one short line is atomic).
 */
async function runUntilKilled(dir: string, delayMs: number): Promise<{ pid: number; steps: Step[] }> {
  const child = spawn(
    process.execPath,
    ['--import', './test/support/register-swc.mjs', 'test/integration/fixtures/store-crash-writer.ts', dir],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const steps: Step[] = [];
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = new Promise<NodeJS.Signals | null>((resolve) => {
    child.on('close', (_code, signal) => {
      resolve(signal);
    });
  });
  const guard = setTimeout(() => child.kill('SIGKILL'), 30_000);
  let scheduled = false;
  createInterface({ input: child.stdout }).on('line', (line) => {
    const step = StepSchema.parse(JSON.parse(line));
    steps.push(step);
    if (step.event === 'ack' && !scheduled) {
      scheduled = true;
      setTimeout(() => child.kill('SIGKILL'), delayMs);
    }
  });
  const signal = await closed;
  clearTimeout(guard);
  if (!steps.some((step) => step.event === 'ack') || signal !== 'SIGKILL' || child.pid === undefined) {
    throw new Error(`the crash writer did not run until killed (signal ${signal ?? 'none'}): ${stderr}`);
  }
  return { pid: child.pid, steps };
}

async function actualState(store: EmbeddedStore): Promise<Map<string, Expected>> {
  const state = new Map<string, Expected>();
  for (const s of (await store.list(SecretType, { namespace: 'crash' })).items) {
    state.set(`Secret/${s.metadata.name}`, { rv: version(s), size: s.data?.blob?.length ?? -1 });
  }
  for (const p of (await store.list(ProbeType, { namespace: 'crash' })).items) {
    const size = p.spec.note?.length === p.spec.size ? p.spec.size : -1; // -1: a torn payload
    state.set(`Probe/${p.metadata.name}`, { rv: version(p), size });
  }
  return state;
}

/** Whether `now` is the outcome of the in-flight write `step` having completed. */
function completes(step: Step, now: Expected, highestAcked: number): boolean {
  if (step.op === 'delete') return now === 'absent';
  return now !== 'absent' && now.rv > highestAcked && now.size > 0;
}

/** Each object is as last acknowledged, except the one write in flight, which is either undone or done. */
function violations(
  expected: ReadonlyMap<string, Expected>,
  actual: ReadonlyMap<string, Expected>,
  inFlight: Step | undefined,
  highestAcked: number,
): string[] {
  const problems: string[] = [];
  const inFlightKey = inFlight === undefined ? 'none' : `${inFlight.kind ?? ''}/${inFlight.name ?? ''}`;
  for (const key of new Set([...expected.keys(), ...actual.keys()])) {
    const before = expected.get(key) ?? 'absent';
    const now = actual.get(key) ?? 'absent';
    const unchanged = JSON.stringify(now) === JSON.stringify(before);
    const done = inFlight !== undefined && key === inFlightKey && completes(inFlight, now, highestAcked);
    if (!unchanged && !done) {
      problems.push(
        `${key}: expected ${JSON.stringify(before)}, found ${JSON.stringify(now)} (in flight: ${inFlightKey})`,
      );
    }
  }
  return problems;
}

describe('EmbeddedStore under kill -9', () => {
  it(`is left before or after the interrupted write, never corrupt (${CRASH_ROUNDS} rounds)`, async () => {
    const dir = await tempDir();
    let expected = new Map<string, Expected>();
    let highestAcked = 0;
    let acknowledged = 0;
    try {
      for (let round = 0; round < CRASH_ROUNDS; round += 1) {
        const { pid, steps } = await runUntilKilled(dir, 20 + Math.floor(Math.random() * 180));
        for (const step of steps.filter((s) => s.event === 'ack')) {
          const key = `${step.kind ?? ''}/${step.name ?? ''}`;
          const rv = Number(step.rv);
          expected.set(key, step.op === 'delete' ? 'absent' : { rv, size: step.size ?? 0 });
          highestAcked = Math.max(highestAcked, rv);
          acknowledged += 1;
        }
        const last = steps.at(-1);
        const inFlight = last?.event === 'begin' ? last : undefined;
        expect((await readFile(join(dir, 'LOCK'), 'utf8')).split('\n')[0]).toBe(String(pid));

        const store = await EmbeddedStore.open(dir);
        try {
          const actual = await actualState(store);
          expect(violations(expected, actual, inFlight, highestAcked)).toEqual([]);
          const files = await listFiles(join(dir, 'objects'));
          expect(files.filter((f) => !f.endsWith('.json') || f.split('/').at(-1)?.startsWith('.'))).toEqual(
            [],
          );
          expect(files).toHaveLength(actual.size);
          const marker = await store.create(SecretType, secret(`marker-${round}`, 'verify'));
          expect(version(marker)).toBeGreaterThan(highestAcked);
          await store.delete(SecretType, 'verify', `marker-${round}`);
          expected = actual;
          highestAcked = Number((await store.list(SecretType)).resourceVersion);
        } finally {
          await store.close();
        }
      }
      expect(acknowledged).toBeGreaterThan(CRASH_ROUNDS);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
