// Creating objects: what the store fills in, keeps and refuses.
import { describe, expect } from '@jest/globals';
import { SecretType } from '../../../crds/core.js';
import { ProbeType } from '../probe.js';
import type { Probe } from '../probe.js';
import { TIMESTAMP, failure, test } from './context.js';
import type { StoreContext } from './context.js';

export function describeCreate(ctx: StoreContext): void {
  const { probe, secret, getProbe, getSecret } = ctx;
  describe('create', () => {
    test('returns the stored object with uid, resourceVersion, generation 1 and a creationTimestamp', async () => {
      const created = await ctx.store.create(ProbeType, probe('a', { size: 3, note: 'hi' }));
      expect(created.spec).toEqual({ size: 3, note: 'hi' });
      expect(created.metadata.uid).toMatch(/.+/);
      expect(created.metadata.resourceVersion).toMatch(/.+/);
      expect(created.metadata.generation).toBe(1);
      expect(created.metadata.creationTimestamp).toMatch(TIMESTAMP);
      expect(await getProbe('a')).toEqual(created);
    });

    test("ignores the caller's uid, resourceVersion, creationTimestamp and deletionTimestamp", async () => {
      const metadata = {
        uid: '00000000-0000-0000-0000-000000000000',
        resourceVersion: '123456789',
        creationTimestamp: '2000-01-01T00:00:00Z',
        deletionTimestamp: '2000-01-01T00:00:00Z',
      };
      const created = await ctx.store.create(ProbeType, probe('a', { size: 1 }, metadata));
      expect(created.metadata.uid).not.toBe(metadata.uid);
      expect(created.metadata.resourceVersion).not.toBe(metadata.resourceVersion);
      expect(created.metadata.creationTimestamp).not.toBe(metadata.creationTimestamp);
      expect(created.metadata.deletionTimestamp).toBeUndefined();
    });

    test('fails with AlreadyExists when the name is taken, leaving the existing object unchanged', async () => {
      const first = await ctx.store.create(ProbeType, probe('a', { size: 1 }));
      await failure(ctx.store.create(ProbeType, probe('a', { size: 2 })), 'AlreadyExists');
      expect(await getProbe('a')).toEqual(first);
    });

    test('drops the status of a type whose status is a subresource', async () => {
      const created = await ctx.store.create(ProbeType, probe('a', { size: 1 }, {}, { phase: 'Ready' }));
      expect(created.status).toBeUndefined();
      expect((await getProbe('a'))?.status).toBeUndefined();
    });

    test("stores a core Secret's type and data as given", async () => {
      const created = await ctx.store.create(SecretType, secret('s'));
      expect(created.type).toBe('Opaque');
      expect(created.data).toEqual({ token: Buffer.from('s3cret').toString('base64') });
      expect(await getSecret('s')).toEqual(created);
    });

    test("fails with Invalid and stores nothing when the object does not match the type's schema", async () => {
      const spec: unknown = { size: 'large' }; // a caller bypassing the types: the store must still refuse it
      await failure(ctx.store.create(ProbeType, { ...probe('a'), spec } as Probe), 'Invalid');
      expect(await getProbe('a')).toBeUndefined();
    });

    test('fails with Invalid when the name is not a lowercase RFC 1123 subdomain', async () => {
      const invalid = probe('a', { size: 1 }, { name: `Not_Valid-${ctx.run}` });
      await failure(ctx.store.create(ProbeType, invalid), 'Invalid');
    });

    test('fails with Invalid when a namespaced object has no namespace', async () => {
      const object = probe('a');
      const withoutNamespace = {
        ...object,
        metadata: { name: object.metadata.name, labels: object.metadata.labels },
      };
      await failure(ctx.store.create(ProbeType, withoutNamespace), 'Invalid');
    });

    test("fails with Invalid when the object's kind is not the type's", async () => {
      await failure(ctx.store.create(ProbeType, { ...probe('a'), kind: 'Other' }), 'Invalid');
      expect(await getProbe('a')).toBeUndefined();
    });
  });
}
