// KubernetesStore writes: create, replace, status and delete against a scripted API server.
import { describe, expect, it } from '@jest/globals';
import { SecretType } from '../../crds/core.js';
import { deleteBody } from '../../platform/store/kubernetes.js';
import { caught, probe, ProbeType, status, storeWith } from './kubernetes-store-support.js';

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
