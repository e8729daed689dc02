// Unused uploads expire (docs/api.md#files-and-artifacts: after 24 h): the expiry controller on a real controller
// manager over the embedded store, sweeping a real filesystem object store. Time is moved by giving
// the controller a clock 25 h ahead, so the files just written count as a day old.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { OrganizationSpecSchema, OrganizationType, TaskType, apiVersionOf } from '../../crds/index.js';
import type { PromptStatus, Task } from '../../crds/index.js';
import { ControllerManager } from '../../operator/controller/index.js';
import { addUploadedFileExpiryController } from '../../operator/task/controller.js';
import { UploadedFileExpiryReconciler } from '../../operator/task/uploaded-file-expiry.js';
import { createLogger } from '../../platform/log.js';
import { FilesystemObjectStore } from '../../platform/objectstore/filesystem.js';
import { uploadedFileKey } from '../../platform/objectstore/keys.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { eventually } from '../support/api-server.js';

const DAY_AND_AN_HOUR = 25 * 3_600_000;
const logger = createLogger({ level: 'silent' });

let dir: string;
let store: EmbeddedStore;
let objects: FilesystemObjectStore;
let manager: ControllerManager | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-expiry-'));
  store = await EmbeddedStore.open(join(dir, 'store'));
  objects = new FilesystemObjectStore({
    root: join(dir, 'objects'),
    baseUrl: 'http://127.0.0.1:1',
    signingSecret: randomBytes(32),
  });
  for (const name of ['acme', 'globex']) {
    await store.create(OrganizationType, {
      apiVersion: apiVersionOf(OrganizationType),
      kind: OrganizationType.kind,
      metadata: { name },
      spec: OrganizationSpecSchema.parse({ displayName: name }),
    });
  }
});

afterEach(async () => {
  await manager?.stop();
  manager = undefined;
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

async function upload(namespace: string): Promise<string> {
  const id = randomUUID();
  await objects.put(uploadedFileKey(namespace, id), Buffer.from(`file ${id}`));
  return id;
}

/** A task in acme whose one prompt names `fileId` and has `status` (none recorded: pending). */
async function taskNaming(fileId: string, status?: PromptStatus, deleted = false): Promise<Task> {
  const promptId = randomUUID();
  const at = new Date().toISOString();
  const created = await store.create(TaskType, {
    apiVersion: apiVersionOf(TaskType),
    kind: TaskType.kind,
    metadata: { name: randomUUID(), namespace: 'agentry-org-acme' },
    spec: {
      workspace: randomUUID(),
      executor: 'shell',
      title: 'uses a file',
      owner: 'alice',
      visibility: 'shared',
      prompts: [
        { id: promptId, text: 'cat the file', submittedAt: at, files: [{ id: fileId, filename: 'in.txt' }] },
      ],
      ...(deleted ? { deletedAt: at } : {}),
    },
  });
  if (status === undefined) return created;
  return store.replaceStatus(TaskType, { ...created, status: { prompts: [{ id: promptId, status }] } });
}

async function start(options: { intervalMs?: number } = {}): Promise<void> {
  manager = new ControllerManager({ store, logger, registry: new Registry() });
  addUploadedFileExpiryController(manager, {
    objectStore: objects,
    logger,
    registry: new Registry(),
    now: () => new Date(Date.now() + DAY_AND_AN_HOUR),
    ...options,
  });
  await manager.start();
}

const exists = async (namespace: string, id: string): Promise<boolean> =>
  (await objects.head(uploadedFileKey(namespace, id))) !== undefined;

describe('uploaded file expiry', () => {
  it('deletes day-old uploads no pending or running prompt of a live task names, in every organization', async () => {
    const unused = await upload('agentry-org-acme');
    const pending = await upload('agentry-org-acme');
    const running = await upload('agentry-org-acme');
    const finished = await upload('agentry-org-acme');
    const ofDeletedTask = await upload('agentry-org-acme');
    const otherOrg = await upload('agentry-org-globex');
    await taskNaming(pending);
    await taskNaming(running, 'running');
    await taskNaming(finished, 'succeeded');
    await taskNaming(ofDeletedTask, undefined, true);

    await start();
    await eventually(async () => !(await exists('agentry-org-globex', otherOrg)));
    await eventually(async () => !(await exists('agentry-org-acme', unused)));
    expect(await exists('agentry-org-acme', finished)).toBe(false);
    expect(await exists('agentry-org-acme', ofDeletedTask)).toBe(false);
    expect(await exists('agentry-org-acme', pending)).toBe(true);
    expect(await exists('agentry-org-acme', running)).toBe(true);
  });

  it('keeps uploads younger than the limit', async () => {
    const young = await upload('agentry-org-acme');
    manager = new ControllerManager({ store, logger, registry: new Registry() });
    manager.cache(TaskType);
    const reconciler = new UploadedFileExpiryReconciler(manager.caches, {
      objectStore: objects,
      logger,
      registry: new Registry(),
    });
    await manager.start();
    expect(await reconciler.sweep('agentry-org-acme', Date.now())).toBe(0);
    expect(await exists('agentry-org-acme', young)).toBe(true);
  });

  it('sweeps again after its interval without any change to the organization', async () => {
    const first = await upload('agentry-org-acme');
    await start({ intervalMs: 300 });
    await eventually(async () => !(await exists('agentry-org-acme', first)));
    const later = await upload('agentry-org-acme'); // after the start's sweep: only a later one sees it
    await eventually(async () => !(await exists('agentry-org-acme', later)), 10_000);
  });
});
