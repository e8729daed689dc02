// The Task cache's index by workspace (operator/controller/cache-index.ts), over a real embedded
// store: kept by watch events, one namespace never answering for another.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskType } from '../../crds/index.js';
import type { Task } from '../../crds/index.js';
import { TASKS_BY_WORKSPACE } from '../../operator/task/workspace-index.js';
import type { CacheIndex } from '../../operator/controller/cache-index.js';
import { SharedInformers } from '../../operator/controller/caches.js';
import { createLogger } from '../../platform/log.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { until } from '../support/until.js';
import { taskObject as task } from '../support/workspace-objects.js';

let dir: string;
let store: EmbeddedStore;
let informers: SharedInformers;
let index: CacheIndex<Task>;

const namesOn = (namespace: string, workspace: string): string[] =>
  index
    .list(namespace, workspace)
    .map((t) => t.metadata.name)
    .sort();

/** Waits until the cache holds `name` at the store's current version (or, with `gone`, not at all). */
const cached = (namespace: string, name: string, version: string | undefined, gone = false) =>
  until(`the cache to see ${namespace}/${name}`, () => {
    const seen = informers.get(TaskType, namespace, name);
    const done = gone ? seen === undefined : seen?.metadata.resourceVersion === version;
    return Promise.resolve(done ? true : undefined);
  });

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-task-index-'));
  store = await EmbeddedStore.open(dir);
  informers = new SharedInformers(store, createLogger({ level: 'silent' }));
});

afterEach(async () => {
  await informers.stop();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the index of Tasks by workspace', () => {
  it('holds the Tasks that existed when the caches started', async () => {
    await store.create(TaskType, task('org-a', 'early', 'box'));
    index = informers.index(TaskType, TASKS_BY_WORKSPACE, (t: Task) => t.spec.workspace);
    await informers.start();
    expect(namesOn('org-a', 'box')).toEqual(['early']);
  });

  it('shows a Task under its workspace only, follows it when re-pointed, and drops it when deleted', async () => {
    index = informers.index(TaskType, TASKS_BY_WORKSPACE, (t: Task) => t.spec.workspace);
    await informers.start();
    const made = await store.create(TaskType, task('org-a', 'fix-bug', 'box-1'));
    await cached('org-a', 'fix-bug', made.metadata.resourceVersion);
    expect(namesOn('org-a', 'box-1')).toEqual(['fix-bug']);
    expect(namesOn('org-a', 'box-2')).toEqual([]);

    const moved = await store.replace(TaskType, { ...made, spec: { ...made.spec, workspace: 'box-2' } });
    await cached('org-a', 'fix-bug', moved.metadata.resourceVersion);
    expect(namesOn('org-a', 'box-1')).toEqual([]);
    expect(namesOn('org-a', 'box-2')).toEqual(['fix-bug']);

    await store.delete(TaskType, 'org-a', 'fix-bug');
    await cached('org-a', 'fix-bug', undefined, true);
    expect(namesOn('org-a', 'box-2')).toEqual([]);
  });

  it('never answers with another namespace’s Task on a same-named workspace', async () => {
    index = informers.index(TaskType, TASKS_BY_WORKSPACE, (t: Task) => t.spec.workspace);
    await informers.start();
    const ours = await store.create(TaskType, task('org-a', 'ours', 'box'));
    const theirs = await store.create(TaskType, task('org-b', 'theirs', 'box'));
    await cached('org-a', 'ours', ours.metadata.resourceVersion);
    await cached('org-b', 'theirs', theirs.metadata.resourceVersion);
    expect(namesOn('org-a', 'box')).toEqual(['ours']);
    expect(namesOn('org-b', 'box')).toEqual(['theirs']);
  });

  it('answers a new array each time, so a caller changing it changes nothing', async () => {
    index = informers.index(TaskType, TASKS_BY_WORKSPACE, (t: Task) => t.spec.workspace);
    const made = await store.create(TaskType, task('org-a', 'kept', 'box'));
    await informers.start();
    index.list('org-a', 'box').length = 0;
    expect(index.list('org-a', 'box').map((t) => t.metadata.uid)).toEqual([made.metadata.uid]);
  });

  it('is shared by name, and cannot be added once the caches started', async () => {
    const first = informers.index(TaskType, TASKS_BY_WORKSPACE, (t: Task) => t.spec.workspace);
    expect(informers.index(TaskType, TASKS_BY_WORKSPACE, (t: Task) => t.spec.workspace)).toBe(first);
    await informers.start();
    expect(() => informers.index(TaskType, 'by-title', (t: Task) => t.spec.title)).toThrow(
      /after the caches started/,
    );
  });
});
