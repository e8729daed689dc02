// KubernetesStore reads: get and list against a scripted API server.
import { describe, expect, it } from '@jest/globals';
import { listQuery } from '../../platform/store/kubernetes.js';
import { caught, probe, ProbeType, status, storeWith } from './kubernetes-store-support.js';

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
