import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventType, SecretType } from '../../crds/index.js';
import type { Secret } from '../../crds/index.js';
import { EventRecorder } from '../../platform/events.js';
import { createLogger } from '../../platform/log.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';

let dir: string;
let store: EmbeddedStore;
let now = new Date('2026-11-22T12:00:00Z');

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-events-'));
  store = await EmbeddedStore.open(dir);
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const subject = async (): Promise<Secret> =>
  store.create(SecretType, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'thing', namespace: 'ns' },
  });

describe('EventRecorder', () => {
  it('records a Kubernetes Event about the object, with reason, message and component', async () => {
    const recorder = new EventRecorder(store, {
      component: 'agentry-operator',
      logger: createLogger({ level: 'silent' }),
    });
    const object = await subject();
    await recorder.record(object, 'Warning', 'ProvisionFailed', 'ErrImagePull: no such image');
    const { items } = await store.list(EventType, { namespace: 'ns' });
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      involvedObject: { kind: 'Secret', name: 'thing', namespace: 'ns', uid: object.metadata.uid },
      type: 'Warning',
      reason: 'ProvisionFailed',
      message: 'ErrImagePull: no such image',
      source: { component: 'agentry-operator' },
    });
  });

  it('records the same event once per minute however often a reconcile loop repeats it', async () => {
    const recorder = new EventRecorder(store, {
      component: 'c',
      logger: createLogger({ level: 'silent' }),
      now: () => now,
    });
    const object = await subject();
    for (let i = 0; i < 5; i++) await recorder.record(object, 'Normal', 'RunnerReady', 'ready');
    expect((await store.list(EventType, { namespace: 'ns' })).items).toHaveLength(1);
    now = new Date(now.getTime() + 61_000);
    await recorder.record(object, 'Normal', 'RunnerReady', 'ready');
    expect((await store.list(EventType, { namespace: 'ns' })).items).toHaveLength(2);
  });

  it('never fails its caller when the event cannot be written', async () => {
    const recorder = new EventRecorder(store, { component: 'c', logger: createLogger({ level: 'silent' }) });
    const object = await subject();
    await store.close();
    await expect(recorder.record(object, 'Normal', 'RunnerReady', 'y')).resolves.toBeUndefined();
    store = await EmbeddedStore.open(dir);
  });
});
