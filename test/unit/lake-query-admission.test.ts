import { describe, expect, it } from '@jest/globals';
import { LakeError } from '../../lake/errors.js';
import { QueryAdmission, admissionLimits } from '../../lake/query-admission.js';

/** A query that runs until released. */
function heldQuery(): { run: () => Promise<string>; release: () => void; started: Promise<void> } {
  let release = (): void => undefined;
  let began = (): void => undefined;
  const started = new Promise<void>((resolve) => {
    began = resolve;
  });
  const done = new Promise<string>((resolve) => {
    release = () => {
      resolve('done');
    };
  });
  return {
    started,
    release,
    run: () => {
      began();
      return done;
    },
  };
}

const codeOf = (err: unknown): string => (err instanceof LakeError ? err.code : String(err));
const never = new AbortController().signal;

/** What the lake server's /v1/sql does: wait for a turn, run, give the turn back however it ended. */
async function runAdmitted<T>(
  admission: QueryAdmission,
  timeoutMs: number,
  signal: AbortSignal,
  query: () => Promise<T>,
): Promise<T> {
  const release = await admission.admit(timeoutMs, signal);
  const running = query();
  void running.then(release, release);
  return running;
}

describe('QueryAdmission', () => {
  it('defaults to one query per thread, at least two, with a queue four times that', () => {
    expect(admissionLimits(undefined, 1)).toEqual({ concurrent: 2, queued: 8 });
    expect(admissionLimits(undefined, 6)).toEqual({ concurrent: 6, queued: 24 });
    expect(admissionLimits(3, 16)).toEqual({ concurrent: 3, queued: 12 });
  });

  it('runs the allowed queries, queues the next ones in order and refuses beyond the queue with busy', async () => {
    const admission = new QueryAdmission({ concurrent: 2, queued: 3 });
    const held = Array.from({ length: 6 }, heldQuery);
    const order: number[] = [];
    const calls = held.map((query, i) =>
      runAdmitted(admission, 60_000, never, async () => {
        order.push(i);
        return query.run();
      }),
    );
    const outcomes = calls.map((call) => call.then(() => 'ok', codeOf));
    expect(await outcomes[5]).toBe('busy');
    expect(admission.counts()).toEqual({ running: 2, queued: 3, refused: 1 });
    for (const query of held.slice(0, 5)) query.release();
    expect(await Promise.all(outcomes.slice(0, 5))).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(admission.counts()).toEqual({ running: 0, queued: 0, refused: 1 });
  });

  it('gives a waiter up with timeout when its query timeout passes in the queue', async () => {
    const admission = new QueryAdmission({ concurrent: 1, queued: 1 });
    const first = heldQuery();
    const running = runAdmitted(admission, 60_000, never, first.run);
    const waiting = runAdmitted(admission, 50, never, () => Promise.resolve('late'));
    await expect(waiting).rejects.toMatchObject({ code: 'timeout' });
    expect(admission.counts()).toMatchObject({ running: 1, queued: 0 });
    first.release();
    await running;
  });

  it('takes a waiter whose caller hung up out of the queue', async () => {
    const admission = new QueryAdmission({ concurrent: 1, queued: 1 });
    const first = heldQuery();
    const running = runAdmitted(admission, 60_000, never, first.run);
    const gone = new AbortController();
    const waiting = runAdmitted(admission, 60_000, gone.signal, () => Promise.resolve('never run'));
    gone.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'timeout' });
    expect(admission.counts()).toMatchObject({ queued: 0 });
    first.release();
    await running;
  });

  it('gives a turn back once however often it is released', async () => {
    const admission = new QueryAdmission({ concurrent: 1, queued: 0 });
    const release = await admission.admit(1000, never);
    release();
    release();
    expect(admission.counts()).toMatchObject({ running: 0 });
    await admission.admit(1000, never);
    await expect(admission.admit(1000, never)).rejects.toMatchObject({ code: 'busy' });
  });

  it('frees the place of a query that failed', async () => {
    const admission = new QueryAdmission({ concurrent: 1, queued: 0 });
    await expect(
      runAdmitted(admission, 1000, never, () => Promise.reject(new Error('boom'))),
    ).rejects.toThrow('boom');
    await expect(runAdmitted(admission, 1000, never, () => Promise.resolve('next'))).resolves.toBe('next');
  });
});
