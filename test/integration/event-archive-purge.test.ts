// A deleted task's archived events go with it when the operator purges the task after retention;
// another task's archive stays. Real embedded store and filesystem object store, the real reconciler.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskType } from '../../crds/index.js';
import type { Task } from '../../crds/index.js';
import { TaskReconciler } from '../../operator/task/reconciler.js';
import { TaskEventFollowers } from '../../operator/task/event-followers.js';
import { ExecutorCatalog } from '../../platform/executor-catalog.js';
import { InstallationKey } from '../../platform/installation-key.js';
import { createLogger } from '../../platform/log.js';
import { FilesystemObjectStore } from '../../platform/objectstore/filesystem.js';
import { promptEventsKey } from '../../platform/objectstore/keys.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';

const NAMESPACE = 'agentry-org-purge';
let dir: string;
let store: EmbeddedStore;
let objectStore: FilesystemObjectStore;
let followers: TaskEventFollowers;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-archive-purge-'));
  store = await EmbeddedStore.open(join(dir, 'store'));
  objectStore = new FilesystemObjectStore({
    root: join(dir, 'objects'),
    baseUrl: 'http://127.0.0.1:1',
    signingSecret: randomBytes(32),
  });
});

afterAll(async () => {
  await followers.stopAll();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

/** A finished task, soft-deleted a day ago, with one archived prompt. */
async function deletedTask(name: string): Promise<{ task: Task; key: string }> {
  const promptId = randomUUID();
  const at = new Date(Date.now() - 24 * 3_600_000).toISOString();
  const task = await store.create(TaskType, {
    apiVersion: 'agentry.dev/v1alpha1',
    kind: 'Task',
    metadata: { name, namespace: NAMESPACE },
    spec: {
      workspace: 'w-kept',
      executor: 'shell',
      title: 't',
      owner: 'u',
      visibility: 'shared',
      prompts: [{ id: promptId, text: 'echo hi', submittedAt: at }],
      deletedAt: at,
    },
  });
  const key = promptEventsKey(NAMESPACE, name, promptId);
  await objectStore.put(key, Buffer.from('{"seq":0}\n'));
  return { task, key };
}

describe('purging a deleted task', () => {
  it('removes its archived events and leaves other tasks’ archives alone', async () => {
    const gone = await deletedTask(randomUUID());
    const kept = promptEventsKey(NAMESPACE, randomUUID(), randomUUID());
    await objectStore.put(kept, Buffer.from('{"seq":0}\n'));
    followers = new TaskEventFollowers({
      logger: createLogger({ level: 'silent' }),
      onProgress: () => undefined,
    });
    const reconciler = new TaskReconciler({
      store,
      logger: createLogger({ level: 'silent' }),
      installationKey: new InstallationKey(randomBytes(32)),
      executors: new ExecutorCatalog(),
      followers,
      objectStore,
      deletedRetentionMs: 3_600_000,
    });
    await reconciler.reconcile({ namespace: NAMESPACE, name: gone.task.metadata.name });
    expect(await store.get(TaskType, NAMESPACE, gone.task.metadata.name)).toBeUndefined();
    expect(await objectStore.head(gone.key)).toBeUndefined();
    expect(await objectStore.head(kept)).toBeDefined();
  });
});
