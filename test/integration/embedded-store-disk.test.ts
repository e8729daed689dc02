// The embedded store on disk: persistence across reopen, resource versions, the data directory lock
// and close.
import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SecretType, NamespaceType } from '../../crds/core.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { ProbeType } from '../contracts/store/contract.js';
import { failure } from '../contracts/store/context.js';
import { listFiles, NS, openStoreForEachTest, probe, secret, version } from './embedded-store-support.js';

/** A process id that is certainly not running: a child that has exited and been reaped. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.on('close', resolve));
  if (child.pid === undefined) throw new Error('no pid');
  return child.pid;
}

describe('EmbeddedStore on disk', () => {
  const disk = openStoreForEachTest();

  describe('persistence', () => {
    it('keeps every object, with uid, resourceVersion and status, across close and reopen', async () => {
      const created = await disk.store.create(ProbeType, probe('a', 3));
      const withStatus = await disk.store.replaceStatus(ProbeType, {
        ...created,
        status: { phase: 'Ready' },
      });
      const kept = await disk.store.create(SecretType, secret('s'));
      await disk.reopen();
      expect(await disk.store.get(ProbeType, NS, 'a')).toEqual(withStatus);
      expect(await disk.store.get(SecretType, NS, 's')).toEqual(kept);
    });

    it('keeps deleted objects deleted across reopen', async () => {
      await disk.store.create(ProbeType, probe('a'));
      await disk.store.delete(ProbeType, NS, 'a');
      await disk.reopen();
      expect(await disk.store.get(ProbeType, NS, 'a')).toBeUndefined();
    });

    it('writes one JSON file per object under objects/<plural>.<group>/<namespace>/, mode 0600 in 0700 dirs', async () => {
      await disk.store.create(SecretType, secret('s'));
      await disk.store.create(NamespaceType, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'team-b' },
      });
      const secretFile = join(disk.dir, 'objects', 'secrets.core', NS, 's.json');
      const namespaceFile = join(disk.dir, 'objects', 'namespaces.core', '_cluster', 'team-b.json');
      const onDisk: unknown = JSON.parse(await readFile(secretFile, 'utf8'));
      expect(onDisk).toMatchObject({ kind: 'Secret', metadata: { name: 's', namespace: NS } });
      expect((await stat(namespaceFile)).isFile()).toBe(true);
      expect((await stat(secretFile)).mode & 0o777).toBe(0o600);
      expect((await stat(join(disk.dir, 'objects', 'secrets.core', NS))).mode & 0o777).toBe(0o700);
    });

    it('removes leftover temp files of interrupted writes at open and never shows them as objects', async () => {
      await disk.store.create(SecretType, secret('s'));
      await disk.store.close();
      const leftover = join(disk.dir, 'objects', 'secrets.core', NS, '.t.json.0123abcd.tmp');
      await writeFile(leftover, '{"half":');
      disk.store = await EmbeddedStore.open(disk.dir);
      const { items } = await disk.store.list(SecretType);
      expect(items.map((s) => s.metadata.name)).toEqual(['s']);
      expect(await listFiles(join(disk.dir, 'objects'))).not.toContain(leftover);
    });

    it('refuses to open, with Unavailable naming the file, when an object file is corrupt', async () => {
      await disk.store.create(SecretType, secret('s'));
      await disk.store.close();
      const file = join(disk.dir, 'objects', 'secrets.core', NS, 's.json');
      await writeFile(file, '{"apiVersion":"v1","kind":"Secret","metadata":');
      const error = await failure(EmbeddedStore.open(disk.dir), 'Unavailable');
      expect(error.message).toContain(file);
      await rm(file);
      disk.store = await EmbeddedStore.open(disk.dir); // the failed open released the lock
    });

    it('collects at open the dependents whose owner vanished in a crash before garbage collection', async () => {
      const owner = await disk.store.create(ProbeType, probe('owner'));
      const ownerReferences = [
        { apiVersion: owner.apiVersion, kind: 'Probe', name: 'owner', uid: owner.metadata.uid ?? '' },
      ];
      await disk.store.create(SecretType, secret('dependent', NS, { ownerReferences }));
      await disk.store.close();
      await rm(join(disk.dir, 'objects', 'probes.agentry.dev', NS, 'owner.json'));
      disk.store = await EmbeddedStore.open(disk.dir);
      expect(await disk.store.get(SecretType, NS, 'dependent')).toBeUndefined();
    });
  });

  describe('resource versions', () => {
    it('are never reused after reopening, even when the newest object was deleted', async () => {
      await disk.store.create(ProbeType, probe('a'));
      const newest = await disk.store.create(ProbeType, probe('b'));
      await disk.store.delete(ProbeType, NS, 'b');
      const afterDelete = Number((await disk.store.list(ProbeType)).resourceVersion);
      expect(afterDelete).toBeGreaterThan(version(newest));
      await disk.reopen();
      const next = await disk.store.create(ProbeType, probe('c'));
      expect(version(next)).toBeGreaterThan(afterDelete);
      expect(Number((await disk.store.list(ProbeType)).resourceVersion)).toBeGreaterThanOrEqual(
        version(next),
      );
    });

    it("list reports the latest write's resourceVersion", async () => {
      await disk.store.create(ProbeType, probe('a'));
      const latest = await disk.store.create(SecretType, secret('s'));
      expect((await disk.store.list(ProbeType)).resourceVersion).toBe(latest.metadata.resourceVersion);
    });

    it('increase with every write across all types', async () => {
      const a = await disk.store.create(ProbeType, probe('a'));
      const s = await disk.store.create(SecretType, secret('s'));
      const a2 = await disk.store.replace(ProbeType, { ...a, spec: { size: 2 } });
      expect(version(s)).toBeGreaterThan(version(a));
      expect(version(a2)).toBeGreaterThan(version(s));
    });
  });

  describe('the data directory lock', () => {
    it('makes a second open of the same directory fail with Unavailable naming the holder', async () => {
      const error = await failure(EmbeddedStore.open(disk.dir), 'Unavailable');
      expect(error.message).toBe(`data directory ${disk.dir} is in use by process ${process.pid}`);
    });

    it('is released by close', async () => {
      await disk.store.close();
      disk.store = await EmbeddedStore.open(disk.dir);
      expect(await disk.store.list(SecretType)).toMatchObject({ items: [] });
    });

    it('is taken over when the process holding it is gone', async () => {
      await disk.store.close();
      await writeFile(join(disk.dir, 'LOCK'), `${await deadPid()}\n`);
      disk.store = await EmbeddedStore.open(disk.dir);
      expect((await readFile(join(disk.dir, 'LOCK'), 'utf8')).split('\n')[0]).toBe(String(process.pid));
    });
  });

  describe('close', () => {
    it('makes every later call fail with Unavailable', async () => {
      await disk.store.close();
      await failure(disk.store.get(SecretType, NS, 's'), 'Unavailable');
      await failure(disk.store.create(SecretType, secret('s')), 'Unavailable');
      disk.store = await EmbeddedStore.open(disk.dir);
    });

    it('ends open watches: done resolves', async () => {
      const watch = await disk.store.watch(
        SecretType,
        { resourceVersion: '0', signal: new AbortController().signal },
        () => undefined,
      );
      await disk.store.close();
      await expect(watch.done).resolves.toBeUndefined();
      disk.store = await EmbeddedStore.open(disk.dir);
    });

    it('lets writes already queued finish first', async () => {
      const write = disk.store.create(SecretType, secret('s'));
      await disk.store.close();
      await expect(write).resolves.toMatchObject({ metadata: { name: 's' } });
      disk.store = await EmbeddedStore.open(disk.dir);
      expect(await disk.store.get(SecretType, NS, 's')).toBeDefined();
    });
  });
});
