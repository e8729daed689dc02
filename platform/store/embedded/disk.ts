import { readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { StoreError } from '../types.js';
import {
  ensureDirectory,
  fsyncDirectory,
  isTempFileName,
  removeFileDurably,
  writeFileAtomic,
} from './files.js';
import type { IndexedObject, StoredObject } from './objects.js';
import { StoredObjectSchema } from './objects.js';

/** Directory name of the cluster-scoped "namespace": not a valid namespace, so it cannot collide. */
const CLUSTER_DIR = '_cluster';
const RESOURCE_DIR = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?\.[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/**
 * The on-disk layout: `<root>/<plural>.<group|core>/<namespace|_cluster>/<name>.json`, one JSON file
 * per object, each replaced atomically.
 */
export class ObjectFiles {
  private readonly knownDirs = new Set<string>();

  constructor(private readonly root: string) {}

  private dirOf(resource: string, namespace: string | undefined): string {
    return join(this.root, resource, namespace ?? CLUSTER_DIR);
  }

  async write(resource: string, object: StoredObject): Promise<void> {
    const dir = this.dirOf(resource, object.metadata.namespace);
    if (!this.knownDirs.has(dir)) {
      await ensureDirectory(dir);
      this.knownDirs.add(dir);
    }
    await writeFileAtomic(join(dir, `${object.metadata.name}.json`), `${JSON.stringify(object)}\n`);
  }

  async remove(resource: string, object: StoredObject): Promise<void> {
    const dir = this.dirOf(resource, object.metadata.namespace);
    await removeFileDurably(join(dir, `${object.metadata.name}.json`));
  }

  /** Reads every object, removing the temp files of interrupted writes. Corrupt files fail the load. */
  async load(): Promise<IndexedObject[]> {
    await ensureDirectory(this.root);
    const loaded: IndexedObject[] = [];
    for (const resource of await subdirectories(this.root)) {
      if (!RESOURCE_DIR.test(resource)) continue;
      for (const namespaceDir of await subdirectories(join(this.root, resource))) {
        const namespace = namespaceDir === CLUSTER_DIR ? undefined : namespaceDir;
        const dir = join(this.root, resource, namespaceDir);
        this.knownDirs.add(dir);
        const objects = await loadDirectory(dir, namespace);
        loaded.push(...objects.map((object) => ({ resource, object })));
      }
    }
    return loaded;
  }
}

async function subdirectories(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
}

async function loadDirectory(dir: string, namespace: string | undefined): Promise<StoredObject[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const temps = entries.filter((entry) => entry.isFile() && isTempFileName(entry.name));
  if (temps.length > 0) {
    await Promise.all(temps.map((entry) => unlink(join(dir, entry.name))));
    await fsyncDirectory(dir);
  }
  const files = entries.filter(
    (entry) => entry.isFile() && !isTempFileName(entry.name) && entry.name.endsWith('.json'),
  );
  return Promise.all(
    files.map((entry) => loadObject(join(dir, entry.name), entry.name.slice(0, -5), namespace)),
  );
}

async function loadObject(path: string, name: string, namespace: string | undefined): Promise<StoredObject> {
  const corrupt = (detail: string, cause?: unknown): StoreError =>
    new StoreError('Unavailable', `object file ${path} is corrupt: ${detail}`, { cause });
  let data: unknown;
  try {
    data = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw corrupt('not readable JSON', err);
  }
  const parsed = StoredObjectSchema.safeParse(data);
  if (!parsed.success)
    throw corrupt(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  const { metadata } = parsed.data;
  if (metadata.name !== name || metadata.namespace !== namespace) {
    throw corrupt(`it holds ${metadata.namespace ?? ''}/${metadata.name}`);
  }
  if (metadata.uid === undefined || metadata.resourceVersion === undefined) {
    throw corrupt('metadata.uid and metadata.resourceVersion are required');
  }
  return parsed.data;
}
