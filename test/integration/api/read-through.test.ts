// Several API replicas each watch the store into a cache of their own. A client that creates a task
// on one replica and at once opens its stream (or reads it) on another must not get 404 because the
// second replica's watch has not delivered the task yet: a cache miss reads the store.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findWorkspace } from '../../../api/agent-computer/find-workspace.js';
import { ApiError } from '../../../api/errors.js';
import { ReadModel } from '../../../api/read-model.js';
import { READ_THROUGH_GRACE_MS, findTask, taskAsCached } from '../../../api/task/access.js';
import { AgentComputerSpecSchema } from '../../../crds/agent-computer/types.js';
import { AgentComputerType, NamespaceType, TaskType } from '../../../crds/index.js';
import { OrganizationType } from '../../../crds/index.js';
import type { Task } from '../../../crds/index.js';
import type { Principal } from '../../../api/auth/principal.js';
import { createLogger } from '../../../platform/log.js';
import { EmbeddedStore } from '../../../platform/store/embedded.js';
import { taskFixture } from '../../support/task-fixture.js';

const namespace = 'agentry-org-acme';
const organization = OrganizationType.schema.parse({
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'Organization',
  metadata: { name: 'acme' },
  spec: { displayName: 'Acme', plan: 'pro' },
});
const principal: Principal = { namespace, user: 'ada', organization, scopes: ['*'], keyId: 'k' };
let dir = '';
let store: EmbeddedStore;
/** A replica whose watch has delivered nothing yet: its caches are empty. */
let lagging: ReadModel;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-read-through-'));
  store = await EmbeddedStore.open(dir);
  await store.create(NamespaceType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  const task = taskFixture({ workspace: 'box' });
  await store.create(TaskType, { ...task, metadata: { ...task.metadata, namespace, name: 'just-made' } });
  await store.create(AgentComputerType, {
    apiVersion: 'agentry.dev/v1alpha1',
    kind: 'AgentComputer',
    metadata: { name: 'box', namespace },
    spec: AgentComputerSpecSchema.parse({ displayName: 'box' }),
  });
  lagging = new ReadModel(store, {
    controlNamespace: 'agentry-system',
    logger: createLogger({ level: 'silent' }),
  });
});

afterAll(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('a replica whose cache has not seen a new object yet', () => {
  it('finds a task another replica just created', async () => {
    expect(lagging.tasks.get(namespace, 'just-made')).toBeUndefined();
    expect((await findTask(lagging, principal, 'just-made')).metadata.name).toBe('just-made');
  });

  it('finds an agent computer another replica just created', async () => {
    expect((await findWorkspace(lagging, namespace, 'box')).metadata.name).toBe('box');
  });

  it('still answers 404 for a task that exists nowhere, or in another organization', async () => {
    await expect(findTask(lagging, principal, 'never-made')).rejects.toBeInstanceOf(ApiError);
    await expect(
      findTask(lagging, { ...principal, namespace: 'agentry-org-other' }, 'just-made'),
    ).rejects.toBeInstanceOf(ApiError);
  });
});

/** Another lagging replica, and the task as its findTask read it through. */
async function freshReplica(): Promise<{ model: ReadModel; found: Task }> {
  const model = new ReadModel(store, {
    controlNamespace: 'agentry-system',
    logger: createLogger({ level: 'silent' }),
  });
  return { model, found: await findTask(model, principal, 'just-made') };
}

describe('an event stream on a replica whose cache has not seen its task yet (GET /v1/tasks/:id/events)', () => {
  it('follows the copy it read from the store until the cache has the task, then the cached one', async () => {
    const { model, found } = await freshReplica();
    const current = taskAsCached(model, principal, found);
    expect(current()).toBe(found);
    const delivered = { ...found, metadata: { ...found.metadata, resourceVersion: 'later' } };
    model.observeTask(delivered);
    expect(current()).toBe(delivered);
  });

  it('sees the task gone once the cache had it and then lost it, within the grace too', async () => {
    const { model, found } = await freshReplica();
    const current = taskAsCached(model, principal, found);
    model.observeTask(found);
    expect(current()).toBe(found); // the stream reads it on every change of the task
    model.observeTask(found, true);
    expect(current()).toBeUndefined();
  });

  it('sees a task the cache never delivered as gone after the grace', async () => {
    const { model, found } = await freshReplica();
    let now = 1_000;
    const current = taskAsCached(model, principal, found, () => now);
    now += READ_THROUGH_GRACE_MS - 1;
    expect(current()).toBe(found);
    now += 1;
    expect(current()).toBeUndefined();
  });
});
