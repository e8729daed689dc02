import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { NamespaceType, SecretType } from '../../crds/core.js';
import { defineCustomResource } from '../../crds/resource.js';
import { KubernetesStore, deleteBody, listQuery } from '../../platform/store/kubernetes.js';
import type {
  KubeRequest,
  KubeResponse,
  KubeStream,
  KubeTransport,
} from '../../platform/store/kubernetes.js';
import {
  errorFromNetwork,
  errorFromResponse,
  KubernetesApiError,
  reasonFor,
} from '../../platform/store/kubernetes/errors.js';
import { collectionPath, objectPath } from '../../platform/store/kubernetes/paths.js';
import { decodeWatchLine, watchQuery } from '../../platform/store/kubernetes/watch.js';
import { isStoreError, StoreError } from '../../platform/store/types.js';
import type { WatchEvent } from '../../platform/store/types.js';

const ProbeType = defineCustomResource({
  group: 'agentry.dev',
  version: 'v1alpha1',
  kind: 'Probe',
  plural: 'probes',
  singular: 'probe',
  namespaced: true,
  shortNames: [],
  description: 'test kind',
  spec: z.object({ size: z.number().int(), note: z.string().optional() }),
  status: z.object({ phase: z.string() }),
  printerColumns: [],
});
type Probe = z.infer<typeof ProbeType.schema>;

const ClusterProbeType = { ...ProbeType, kind: 'Probe', plural: 'clusterprobes', namespaced: false };

const probe = (name: string, extra: Partial<Probe['metadata']> = {}): Probe => ({
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'Probe',
  metadata: { name, namespace: 'ns-a', ...extra },
  spec: { size: 1 },
});

const status = (code: number, reason: string, message: string, name?: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  code,
  reason,
  message,
  details: name === undefined ? {} : { name, group: 'agentry.dev', kind: 'probes' },
});

/** Answers requests from a script and records them. */
class FakeTransport implements KubeTransport {
  readonly requests: KubeRequest[] = [];
  readonly streams: { request: KubeRequest; signal: AbortSignal }[] = [];
  constructor(
    private readonly answers: KubeResponse[] = [],
    private readonly opened: KubeStream[] = [],
  ) {}

  request(request: KubeRequest): Promise<KubeResponse> {
    this.requests.push(request);
    const answer = this.answers.shift();
    return answer === undefined
      ? Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6443'))
      : Promise.resolve(answer);
  }

  stream(request: KubeRequest, signal: AbortSignal): Promise<KubeStream> {
    this.streams.push({ request, signal });
    const next = this.opened.shift();
    return next === undefined ? Promise.reject(new Error('no stream scripted')) : Promise.resolve(next);
  }
}

const storeWith = (...answers: KubeResponse[]) => {
  const transport = new FakeTransport(answers);
  return { transport, store: KubernetesStore.fromTransport(transport) };
};

const caught = async (promise: Promise<unknown>): Promise<StoreError> => {
  try {
    await promise;
  } catch (err) {
    if (err instanceof StoreError) return err;
    throw err;
  }
  throw new Error('expected a StoreError');
};

describe('paths', () => {
  it('builds core and custom, namespaced and cluster-scoped paths', () => {
    expect(collectionPath(SecretType, 'ns-a')).toBe('/api/v1/namespaces/ns-a/secrets');
    expect(collectionPath(SecretType, undefined)).toBe('/api/v1/secrets');
    expect(objectPath(NamespaceType, undefined, 'ns-a', 'status')).toBe('/api/v1/namespaces/ns-a/status');
    expect(objectPath(NamespaceType, 'ignored', 'ns-a')).toBe('/api/v1/namespaces/ns-a');
    expect(objectPath(ProbeType, 'ns-a', 'p1', 'status')).toBe(
      '/apis/agentry.dev/v1alpha1/namespaces/ns-a/probes/p1/status',
    );
    expect(objectPath(ClusterProbeType, undefined, 'p1')).toBe('/apis/agentry.dev/v1alpha1/clusterprobes/p1');
  });

  it('refuses a namespaced object without a namespace', () => {
    expect(() => objectPath(ProbeType, undefined, 'p1')).toThrow(StoreError);
  });
});

describe('error mapping', () => {
  it.each([
    [404, 'NotFound', 'NotFound'],
    [409, 'AlreadyExists', 'AlreadyExists'],
    [409, 'Conflict', 'Conflict'],
    [410, 'Expired', 'Expired'],
    [410, 'Gone', 'Expired'],
    [422, 'Invalid', 'Invalid'],
    [400, 'BadRequest', 'Invalid'],
    [401, 'Unauthorized', 'Forbidden'],
    [403, 'Forbidden', 'Forbidden'],
    [429, 'TooManyRequests', 'Unavailable'],
    [500, 'InternalError', 'Unavailable'],
    [503, 'ServiceUnavailable', 'Unavailable'],
  ])('maps %i %s to %s', (code, reason, expected) => {
    expect(reasonFor(code, reason)).toBe(expected);
  });

  it("keeps the API server's message and the answer as cause", () => {
    const message =
      'Probe.agentry.dev "p1" is invalid: spec.size: Invalid value: "string": spec.size in body must be of type integer';
    const err = errorFromResponse(
      422,
      status(422, 'Invalid', message, 'p1'),
      'creating probes.agentry.dev "p1"',
    );
    expect(err.reason).toBe('Invalid');
    expect(err.message).toBe(`creating probes.agentry.dev "p1": ${message}`);
    expect(err.cause).toBeInstanceOf(KubernetesApiError);
    expect(err.cause).toMatchObject({ code: 422, status: { reason: 'Invalid' } });
  });

  it('describes an answer that is not a Status', () => {
    const err = errorFromResponse(404, '404 page not found\n', 'reading x');
    expect(err).toMatchObject({ reason: 'NotFound', message: 'reading x: HTTP 404: 404 page not found' });
  });

  it('maps network failures to Unavailable, keeping the cause', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' });
    const err = errorFromNetwork(cause, 'listing secrets');
    expect(err).toMatchObject({
      reason: 'Unavailable',
      message: 'listing secrets: connect ECONNREFUSED 127.0.0.1:6443',
    });
    expect(err.cause).toBe(cause);
  });
});

describe('get', () => {
  it('parses the object', async () => {
    const { store, transport } = storeWith({ status: 200, body: probe('p1', { resourceVersion: '7' }) });
    await expect(store.get(ProbeType, 'ns-a', 'p1')).resolves.toMatchObject({
      metadata: { resourceVersion: '7' },
    });
    expect(transport.requests[0]).toMatchObject({
      method: 'GET',
      path: '/apis/agentry.dev/v1alpha1/namespaces/ns-a/probes/p1',
    });
  });

  it('answers undefined when the object is missing', async () => {
    const { store } = storeWith({
      status: 404,
      body: status(404, 'NotFound', 'probes.agentry.dev "p1" not found', 'p1'),
    });
    await expect(store.get(ProbeType, 'ns-a', 'p1')).resolves.toBeUndefined();
  });

  it('fails with NotFound when the type is not served', async () => {
    const { store } = storeWith({
      status: 404,
      body: status(404, 'NotFound', 'the server could not find the requested resource'),
    });
    await expect(caught(store.get(ProbeType, 'ns-a', 'p1'))).resolves.toMatchObject({ reason: 'NotFound' });
  });

  it('fails with Invalid, naming the object, when it does not parse', async () => {
    const bad = { ...probe('p1'), spec: { size: 'big' } };
    const { store } = storeWith({ status: 200, body: bad });
    const err = await caught(store.get(ProbeType, 'ns-a', 'p1'));
    expect(err.reason).toBe('Invalid');
    expect(err.message).toContain('"ns-a/p1"');
    expect(err.message).toContain('spec.size');
  });

  it('maps a failed connection to Unavailable', async () => {
    const { store } = storeWith();
    await expect(caught(store.get(ProbeType, 'ns-a', 'p1'))).resolves.toMatchObject({
      reason: 'Unavailable',
    });
  });
});

describe('list', () => {
  const item = (name: string) => ({
    metadata: { name, namespace: 'ns-a', resourceVersion: '5' },
    spec: { size: 2 },
  });

  it('fills in apiVersion and kind, passes the selector, and pages', async () => {
    const { store, transport } = storeWith(
      { status: 200, body: { metadata: { resourceVersion: '9', continue: 'next' }, items: [item('a')] } },
      { status: 200, body: { metadata: { resourceVersion: '9' }, items: [item('b')] } },
    );
    const result = await store.list(ProbeType, { namespace: 'ns-a', labelSelector: 'a=b,c notin (x,y),!d' });
    expect(result.resourceVersion).toBe('9');
    expect(result.items.map((p) => [p.apiVersion, p.kind, p.metadata.name])).toEqual([
      ['agentry.dev/v1alpha1', 'Probe', 'a'],
      ['agentry.dev/v1alpha1', 'Probe', 'b'],
    ]);
    expect(transport.requests[0]?.query?.get('labelSelector')).toBe('a=b,c notin (x,y),!d');
    expect(transport.requests[1]?.query?.get('continue')).toBe('next');
  });

  it('lists every namespace when none is given', async () => {
    const { store, transport } = storeWith({
      status: 200,
      body: { metadata: { resourceVersion: '3' }, items: null },
    });
    await expect(store.list(ProbeType)).resolves.toEqual({ items: [], resourceVersion: '3' });
    expect(transport.requests[0]?.path).toBe('/apis/agentry.dev/v1alpha1/probes');
  });

  it('lists again unpaged when a continue token expires', async () => {
    const { store, transport } = storeWith(
      { status: 200, body: { metadata: { resourceVersion: '9', continue: 'next' }, items: [item('a')] } },
      { status: 410, body: status(410, 'Expired', 'The provided continue parameter is too old') },
      { status: 200, body: { metadata: { resourceVersion: '12' }, items: [item('a'), item('b')] } },
    );
    await expect(store.list(ProbeType, { namespace: 'ns-a' })).resolves.toMatchObject({
      resourceVersion: '12',
    });
    expect(transport.requests[2]?.query?.has('limit')).toBe(false);
  });

  it('builds the list query', () => {
    expect(listQuery({}, 0, undefined).toString()).toBe('');
    expect(listQuery({ labelSelector: 'app in (a,b)' }, 500, 'tok').toString()).toBe(
      'labelSelector=app+in+%28a%2Cb%29&limit=500&continue=tok',
    );
  });
});

describe('writes', () => {
  it('creates with a POST to the collection', async () => {
    const { store, transport } = storeWith({
      status: 201,
      body: probe('p1', { resourceVersion: '1', uid: 'u1' }),
    });
    await expect(store.create(ProbeType, probe('p1'))).resolves.toMatchObject({ metadata: { uid: 'u1' } });
    expect(transport.requests[0]).toMatchObject({
      method: 'POST',
      path: '/apis/agentry.dev/v1alpha1/namespaces/ns-a/probes',
    });
  });

  it('maps AlreadyExists on create', async () => {
    const { store } = storeWith({
      status: 409,
      body: status(409, 'AlreadyExists', 'probes.agentry.dev "p1" already exists', 'p1'),
    });
    await expect(caught(store.create(ProbeType, probe('p1')))).resolves.toMatchObject({
      reason: 'AlreadyExists',
    });
  });

  it('drops the resourceVersion on create, and refuses a replace without one before sending', async () => {
    const { store, transport } = storeWith({ status: 201, body: probe('p1', { resourceVersion: '1' }) });
    await store.create(ProbeType, probe('p1', { resourceVersion: '3' }));
    expect(transport.requests[0]?.body).toEqual(probe('p1'));
    await expect(caught(store.replace(ProbeType, probe('p1')))).resolves.toMatchObject({ reason: 'Invalid' });
    expect(transport.requests).toHaveLength(1);
  });

  it('replaces with a PUT and maps a stale version to Conflict', async () => {
    const message = 'Operation cannot be fulfilled on probes.agentry.dev "p1": the object has been modified';
    const { store, transport } = storeWith({ status: 409, body: status(409, 'Conflict', message, 'p1') });
    const err = await caught(store.replace(ProbeType, probe('p1', { resourceVersion: '3' })));
    expect(err).toMatchObject({ reason: 'Conflict' });
    expect(err.message).toContain(message);
    expect(transport.requests[0]).toMatchObject({
      method: 'PUT',
      path: '/apis/agentry.dev/v1alpha1/namespaces/ns-a/probes/p1',
    });
  });

  it('writes status with the given version', async () => {
    const { store, transport } = storeWith({ status: 200, body: probe('p1', { resourceVersion: '4' }) });
    await store.replaceStatus(
      ProbeType,
      { ...probe('p1'), status: { phase: 'Ready' } },
      { resourceVersion: '3' },
    );
    expect(transport.requests[0]).toMatchObject({
      method: 'PUT',
      path: '/apis/agentry.dev/v1alpha1/namespaces/ns-a/probes/p1/status',
      body: { metadata: { resourceVersion: '3' }, status: { phase: 'Ready' } },
    });
  });

  it('writes status unconditionally: reads the current version after a conflict', async () => {
    const { store, transport } = storeWith(
      { status: 409, body: status(409, 'Conflict', 'the object has been modified', 'p1') },
      { status: 200, body: probe('p1', { resourceVersion: '8' }) },
      { status: 200, body: probe('p1', { resourceVersion: '9' }) },
    );
    const written = await store.replaceStatus(ProbeType, {
      ...probe('p1', { resourceVersion: '2' }),
      status: { phase: 'Ready' },
    });
    expect(written.metadata.resourceVersion).toBe('9');
    expect(transport.requests.map((r) => r.method)).toEqual(['PUT', 'GET', 'PUT']);
    expect(transport.requests[2]?.body).toMatchObject({ metadata: { resourceVersion: '8' } });
  });

  it('refuses a status write on a type without a status subresource', async () => {
    const { store } = storeWith();
    const secret = {
      apiVersion: 'v1' as const,
      kind: 'Secret' as const,
      metadata: { name: 's', namespace: 'ns-a' },
    };
    await expect(caught(store.replaceStatus(SecretType, secret))).resolves.toMatchObject({
      reason: 'Invalid',
    });
  });
});

describe('delete', () => {
  it('sends preconditions and background propagation', () => {
    expect(deleteBody({})).toEqual({
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      propagationPolicy: 'Background',
    });
    expect(deleteBody({ uid: 'u1', resourceVersion: '4' })).toMatchObject({
      preconditions: { uid: 'u1', resourceVersion: '4' },
    });
  });

  it('returns the object while finalizers keep it', async () => {
    const left = probe('p1', { deletionTimestamp: '2025-01-01T00:00:00Z', finalizers: ['agentry.dev/x'] });
    const { store } = storeWith({ status: 200, body: left });
    await expect(store.delete(ProbeType, 'ns-a', 'p1')).resolves.toMatchObject({
      metadata: { finalizers: ['agentry.dev/x'] },
    });
  });

  it('returns undefined once the object is gone', async () => {
    const { store } = storeWith(
      { status: 200, body: { kind: 'Status', apiVersion: 'v1', status: 'Success', details: { name: 's' } } },
      { status: 200, body: probe('p1', { resourceVersion: '5' }) },
    );
    await expect(store.delete(SecretType, 'ns-a', 's')).resolves.toBeUndefined();
    await expect(store.delete(ProbeType, 'ns-a', 'p1')).resolves.toBeUndefined();
  });

  it('maps a failed precondition to Conflict and a missing object to NotFound', async () => {
    const { store } = storeWith(
      {
        status: 409,
        body: status(
          409,
          'Conflict',
          'Precondition failed: UID in precondition: u1, UID in object meta: u2',
          'p1',
        ),
      },
      { status: 404, body: status(404, 'NotFound', 'probes.agentry.dev "p1" not found', 'p1') },
    );
    await expect(caught(store.delete(ProbeType, 'ns-a', 'p1', { uid: 'u1' }))).resolves.toMatchObject({
      reason: 'Conflict',
    });
    await expect(caught(store.delete(ProbeType, 'ns-a', 'p1'))).resolves.toMatchObject({
      reason: 'NotFound',
    });
  });
});

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
