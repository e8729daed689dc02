import { describe, expect, it } from '@jest/globals';
import { untilObserved } from '../../api/until-observed.js';
import type { Observation } from '../../api/until-observed.js';

/** A change feed like the read model's: listeners called on every change, removable. */
function feed(): { subscribe: (l: () => void) => () => void; change: () => void; listeners: () => number } {
  const listeners = new Set<() => void>();
  return {
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    change: () => {
      for (const listener of [...listeners]) listener();
    },
    listeners: () => listeners.size,
  };
}

describe('untilObserved', () => {
  it('resolves with what a later change shows, and stops listening', async () => {
    const changes = feed();
    const seen: { now: Observation<string> } = { now: undefined };
    const waiting = untilObserved(
      changes.subscribe,
      () => seen.now,
      new AbortController().signal,
      () => new Error('late'),
    );
    expect(changes.listeners()).toBe(1);
    seen.now = { value: 'ready' };
    changes.change();
    await expect(waiting).resolves.toBe('ready');
    expect(changes.listeners()).toBe(0);
  });

  it('resolves at once when the first look already decides', async () => {
    const changes = feed();
    await expect(
      untilObserved(
        changes.subscribe,
        () => ({ value: 1 }),
        new AbortController().signal,
        () => new Error('late'),
      ),
    ).resolves.toBe(1);
    expect(changes.listeners()).toBe(0);
  });

  it('rejects with the failure a look reports', async () => {
    const changes = feed();
    const seen: { now: Observation<string> } = { now: undefined };
    const waiting = untilObserved(
      changes.subscribe,
      () => seen.now,
      new AbortController().signal,
      () => new Error('late'),
    );
    seen.now = { error: new Error('stopped meanwhile') };
    changes.change();
    await expect(waiting).rejects.toThrow('stopped meanwhile');
    expect(changes.listeners()).toBe(0);
  });

  it('rejects with the abort error when the signal aborts first, and stops listening', async () => {
    const changes = feed();
    const abort = new AbortController();
    const waiting = untilObserved(
      changes.subscribe,
      () => undefined,
      abort.signal,
      () => new Error('still starting'),
    );
    abort.abort();
    await expect(waiting).rejects.toThrow('still starting');
    expect(changes.listeners()).toBe(0);
  });

  it('rejects at once on a signal aborted before the wait', async () => {
    const changes = feed();
    await expect(
      untilObserved(
        changes.subscribe,
        () => undefined,
        AbortSignal.abort(),
        () => new Error('too late'),
      ),
    ).rejects.toThrow('too late');
    expect(changes.listeners()).toBe(0);
  });
});
