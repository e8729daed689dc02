import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setCondition } from '../../crds/conditions.js';
import { OrganizationSpecSchema, OrganizationType, apiVersionOf } from '../../crds/index.js';
import type { Organization, OrganizationStatus } from '../../crds/index.js';
import { updateStatus, writeStatus } from '../../platform/store/status-writer.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';

const NOW = new Date('2026-11-22T12:00:00Z');
const LATER = new Date('2026-11-22T12:05:00Z');

let dir: string;
let store: EmbeddedStore;

const readyStatus = (org: Organization, now: Date): OrganizationStatus => ({
  namespace: 'agentry-org-acme',
  observedGeneration: org.metadata.generation,
  conditions: setCondition(
    org.status?.conditions,
    { type: 'Ready', status: 'True', reason: 'NamespaceReady', message: 'ready' },
    org.metadata.generation,
    now,
  ),
});

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-status-writer-'));
  store = await EmbeddedStore.open(dir);
  await store.create(OrganizationType, {
    apiVersion: apiVersionOf(OrganizationType),
    kind: OrganizationType.kind,
    metadata: { name: 'acme' },
    spec: OrganizationSpecSchema.parse({ displayName: 'Acme' }),
  });
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const read = async (): Promise<Organization> => {
  const org = await store.get(OrganizationType, undefined, 'acme');
  if (org === undefined) throw new Error('the organization is gone');
  return org;
};

describe('the status writer', () => {
  it('writes a status that changed, once', async () => {
    const org = await read();
    const statusWrites = jest.spyOn(store, 'replaceStatus');
    const written = await writeStatus(store, OrganizationType, org, readyStatus(org, NOW));
    expect(statusWrites).toHaveBeenCalledTimes(1);
    expect(written?.status?.conditions?.[0]?.reason).toBe('NamespaceReady');
  });

  it('does not write when the same observation is made again later', async () => {
    const first = await read();
    await writeStatus(store, OrganizationType, first, readyStatus(first, NOW));
    const again = await read();
    const statusWrites = jest.spyOn(store, 'replaceStatus');
    const written = await writeStatus(store, OrganizationType, again, readyStatus(again, LATER));
    expect(written).toBeUndefined();
    expect(statusWrites).not.toHaveBeenCalled();
  });

  it('with a precondition, fails with Conflict when another writer came first', async () => {
    const stale = await read();
    await writeStatus(store, OrganizationType, stale, { namespace: 'other' });
    const outcome = writeStatus(store, OrganizationType, stale, readyStatus(stale, NOW), {
      precondition: true,
    });
    await expect(outcome).rejects.toMatchObject({ reason: 'Conflict' });
  });

  it('starts over from a fresh read after a conflicting write, keeping the other writer’s field', async () => {
    const stale = await read();
    await writeStatus(store, OrganizationType, stale, { namespace: 'theirs' });
    let changes = 0;
    const written = await updateStatus(
      store,
      OrganizationType,
      { namespace: undefined, name: 'acme' },
      (current) => {
        changes++;
        return { ...current.status, observedGeneration: 7 };
      },
      { read: stale },
    );
    expect({ changes, status: written?.status }).toEqual({
      changes: 2,
      status: { namespace: 'theirs', observedGeneration: 7 },
    });
  });

  it('skips the write of a read-merge-write that changes nothing', async () => {
    const org = await read();
    await writeStatus(store, OrganizationType, org, readyStatus(org, NOW));
    const statusWrites = jest.spyOn(store, 'replaceStatus');
    const written = await updateStatus(
      store,
      OrganizationType,
      { namespace: undefined, name: 'acme' },
      (current) => readyStatus(current, LATER),
    );
    expect(statusWrites).not.toHaveBeenCalled();
    expect(written?.status?.conditions?.[0]?.lastTransitionTime).toBe('2026-11-22T12:00:00Z');
  });

  it('resolves undefined for an object that is gone', async () => {
    await store.delete(OrganizationType, undefined, 'acme');
    const written = await updateStatus(
      store,
      OrganizationType,
      { namespace: undefined, name: 'acme' },
      () => ({}),
    );
    expect(written).toBeUndefined();
  });
});
