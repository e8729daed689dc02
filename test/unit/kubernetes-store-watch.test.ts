// KubernetesStore watches: event decoding, bookmarks, expiry, abort and close.
import { describe, expect, it } from '@jest/globals';
import { KubernetesStore } from '../../platform/store/kubernetes.js';
import type { KubeStream } from '../../platform/store/kubernetes.js';
import { decodeWatchLine, watchQuery } from '../../platform/store/kubernetes/watch.js';
import { isStoreError, StoreError } from '../../platform/store/types.js';
import type { WatchEvent } from '../../platform/store/types.js';
import { caught, FakeTransport, probe, ProbeType, status } from './kubernetes-store-support.js';
import type { Probe } from './kubernetes-store-support.js';

async function* linesOf(...lines: string[]): AsyncGenerator<string> {
  for (const line of lines) {
    await Promise.resolve();
    yield line;
  }
}

/** Lines that never end until the signal aborts, like an idle watch. */
async function* idleAfter(signal: AbortSignal, ...lines: string[]): AsyncGenerator<string> {
  yield* linesOf(...lines);
  await new Promise((_resolve, reject) => {
    signal.addEventListener('abort', () => {
      reject(new Error('aborted'));
    });
  });
}

const event = (type: string, object: unknown) => JSON.stringify({ type, object });

describe('watch', () => {
  it('delivers events in order, with bookmarks', async () => {
    const lines = linesOf(
      event('ADDED', probe('a', { resourceVersion: '2' })),
      event('MODIFIED', probe('a', { resourceVersion: '3' })),
      event('BOOKMARK', {
        kind: 'Probe',
        apiVersion: 'agentry.dev/v1alpha1',
        metadata: { resourceVersion: '4' },
      }),
      event('DELETED', probe('a', { resourceVersion: '5' })),
    );
    const transport = new FakeTransport([], [{ ok: true, lines }]);
    const store = KubernetesStore.fromTransport(transport);
    const seen: string[] = [];
    const onEvent = (e: WatchEvent<Probe>) =>
      seen.push(
        e.type === 'BOOKMARK'
          ? `BOOKMARK ${e.resourceVersion}`
          : `${e.type} ${e.object.metadata.resourceVersion}`,
      );
    const watch = await store.watch(
      ProbeType,
      { namespace: 'ns-a', resourceVersion: '1', signal: new AbortController().signal },
      onEvent,
    );
    await expect(caught(watch.done)).resolves.toMatchObject({ reason: 'Unavailable' });
    expect(seen).toEqual(['ADDED 2', 'MODIFIED 3', 'BOOKMARK 4', 'DELETED 5']);
    expect(transport.streams[0]?.request.query?.toString()).toBe(
      'watch=true&allowWatchBookmarks=true&resourceVersion=1',
    );
  });

  it('ends with Expired on a 410 ERROR event', async () => {
    const gone = status(410, 'Expired', 'too old resource version: 1 (40)');
    const transport = new FakeTransport([], [{ ok: true, lines: linesOf(event('ERROR', gone)) }]);
    const store = KubernetesStore.fromTransport(transport);
    const watch = await store.watch(
      ProbeType,
      { resourceVersion: '1', signal: new AbortController().signal },
      () => undefined,
    );
    const err = await caught(watch.done);
    expect(err.reason).toBe('Expired');
    expect(err.message).toContain('too old resource version');
  });

  it('resolves when the caller aborts, and when the store closes', async () => {
    const first = new AbortController();
    const transport = new FakeTransport([], []);
    const store = KubernetesStore.fromTransport(transport);
    const streamFor = (signal: AbortSignal): KubeStream => ({
      ok: true,
      lines: idleAfter(signal, event('ADDED', probe('a'))),
    });
    transport.stream = (request, signal) => {
      transport.streams.push({ request, signal });
      return Promise.resolve(streamFor(signal));
    };
    const events: string[] = [];
    const a = await store.watch(ProbeType, { resourceVersion: '', signal: first.signal }, (e) =>
      events.push(e.type),
    );
    const b = await store.watch(
      ProbeType,
      { resourceVersion: '0', signal: new AbortController().signal },
      () => undefined,
    );
    await new Promise((resolve) => setTimeout(resolve, 10));
    first.abort();
    await expect(a.done).resolves.toBeUndefined();
    await store.close();
    await expect(b.done).resolves.toBeUndefined();
    expect(events).toEqual(['ADDED']);
    expect(transport.streams[0]?.request.query?.has('resourceVersion')).toBe(false);
    expect(transport.streams[1]?.request.query?.get('resourceVersion')).toBe('0');
    await expect(
      caught(store.watch(ProbeType, { resourceVersion: '', signal: first.signal }, () => undefined)),
    ).resolves.toMatchObject({
      reason: 'Unavailable',
    });
  });

  it('ends with Unavailable, keeping the cause, when the callback throws', async () => {
    const lines = linesOf(event('ADDED', probe('a')), event('ADDED', probe('b')));
    const store = KubernetesStore.fromTransport(new FakeTransport([], [{ ok: true, lines }]));
    const boom = new Error('boom');
    const seen: string[] = [];
    const watch = await store.watch(
      ProbeType,
      { resourceVersion: '1', signal: new AbortController().signal },
      (e) => {
        seen.push(e.type);
        throw boom;
      },
    );
    const err = await caught(watch.done);
    expect(err).toMatchObject({ reason: 'Unavailable', cause: boom });
    expect(seen).toEqual(['ADDED']);
  });

  it('rejects when the API server refuses the watch', async () => {
    const forbidden = status(
      403,
      'Forbidden',
      'probes.agentry.dev is forbidden: User "u" cannot watch resource "probes"',
    );
    const transport = new FakeTransport([], [{ ok: false, response: { status: 403, body: forbidden } }]);
    const store = KubernetesStore.fromTransport(transport);
    const err = await caught(
      store.watch(ProbeType, { resourceVersion: '1', signal: new AbortController().signal }, () => undefined),
    );
    expect(err.reason).toBe('Forbidden');
  });

  it('decodes lines and builds the query', () => {
    expect(() => decodeWatchLine(ProbeType, 'not json', 'watching')).toThrow(StoreError);
    const invalid = event('ADDED', { ...probe('a'), spec: {} });
    expect(() => decodeWatchLine(ProbeType, invalid, 'watching')).toThrow(
      expect.objectContaining({ reason: 'Invalid' }),
    );
    const query = watchQuery(
      { resourceVersion: '5', labelSelector: 'x=y', signal: new AbortController().signal },
      300,
    );
    expect(query.toString()).toBe(
      'watch=true&allowWatchBookmarks=true&resourceVersion=5&labelSelector=x%3Dy&timeoutSeconds=300',
    );
    expect(isStoreError(new StoreError('Expired', 'x'), 'Expired')).toBe(true);
  });
});
