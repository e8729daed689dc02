// What the EmbeddedStore test files share: a store opened on a fresh directory for each test, and
// builders for the objects they write in one namespace.
import { afterEach, beforeEach } from '@jest/globals';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Secret } from '../../crds/core.js';
import { apiVersionOf } from '../../crds/resource.js';
import type { KubeObject } from '../../crds/resource.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import type { EmbeddedStoreOptions } from '../../platform/store/embedded.js';
import { ProbeType } from '../contracts/store/contract.js';
import type { Probe } from '../contracts/store/contract.js';

export const tempDir = (): Promise<string> => mkdtemp(join(tmpdir(), 'agentry-store-'));

export const NS = 'team-a';

export const probe = (name: string, size = 1, metadata: Partial<Probe['metadata']> = {}): Probe => ({
  apiVersion: apiVersionOf(ProbeType),
  kind: 'Probe',
  metadata: { name, namespace: NS, ...metadata },
  spec: { size },
});

export const secret = (name: string, namespace = NS, metadata: Partial<Secret['metadata']> = {}): Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace, ...metadata },
  data: { key: Buffer.from(name).toString('base64') },
});

export const version = (object: KubeObject | undefined): number =>
  Number(object?.metadata.resourceVersion ?? NaN);

export async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

/** The store of the running test, on its own directory; a test may close and reopen it. */
export class OpenStore {
  dir = '';
  #store: EmbeddedStore | undefined;

  get store(): EmbeddedStore {
    if (this.#store === undefined) throw new Error('the store is only open inside a test');
    return this.#store;
  }

  set store(store: EmbeddedStore) {
    this.#store = store;
  }

  /** Closes the store and opens its directory again, as a restart would. */
  async reopen(options?: EmbeddedStoreOptions): Promise<EmbeddedStore> {
    await this.store.close();
    this.store = await EmbeddedStore.open(this.dir, options);
    return this.store;
  }
}

/** Opens a store on a fresh directory before each test and closes and removes it after. */
export function openStoreForEachTest(): OpenStore {
  const open = new OpenStore();
  beforeEach(async () => {
    open.dir = await tempDir();
    open.store = await EmbeddedStore.open(open.dir);
  });
  afterEach(async () => {
    try {
      await open.store.close();
    } finally {
      await rm(open.dir, { recursive: true, force: true });
    }
  });
  return open;
}
