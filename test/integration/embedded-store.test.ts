import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { SecretType, NamespaceType } from '../../crds/core.js';
import type { Namespace, Secret } from '../../crds/core.js';
import { apiVersionOf } from '../../crds/resource.js';
import type { KubeObject } from '../../crds/resource.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import type { StoreErrorReason, WatchEvent } from '../../platform/store/types.js';
import { StoreError } from '../../platform/store/types.js';
import { describeStoreContract, ProbeType } from '../contracts/store/contract.js';
import type { Probe } from '../contracts/store/contract.js';

const tempDir = (): Promise<string> => mkdtemp(join(tmpdir(), 'agentry-store-'));

describeStoreContract('EmbeddedStore', async () => {
  const dir = await tempDir();
  const store = await EmbeddedStore.open(dir);
  return {
    store,
    namespace: 'contract',
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

const NS = 'team-a';

const probe = (name: string, size = 1, metadata: Partial<Probe['metadata']> = {}): Probe => ({
  apiVersion: apiVersionOf(ProbeType),
  kind: 'Probe',
  metadata: { name, namespace: NS, ...metadata },
  spec: { size },
});

const secret = (name: string, namespace = NS, metadata: Partial<Secret['metadata']> = {}): Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace, ...metadata },
  data: { key: Buffer.from(name).toString('base64') },
});

async function failure(call: Promise<unknown>, reason: StoreErrorReason): Promise<StoreError> {
  const outcome = await call.then(
    (value: unknown) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected a StoreError ${reason}, but the call succeeded`);
  if (!(outcome.error instanceof StoreError)) throw outcome.error;
  expect(outcome.error.reason).toBe(reason);
  return outcome.error;
}

const version = (object: KubeObject | undefined): number => Number(object?.metadata.resourceVersion ?? NaN);
const nextMacrotask = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A process id that is certainly not running: a child that has exited and been reaped. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.on('close', resolve));
  if (child.pid === undefined) throw new Error('no pid');
  return child.pid;
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

describe('EmbeddedStore on disk', () => {
  let dir: string;
  let store: EmbeddedStore;

  beforeEach(async () => {
    dir = await tempDir();
    store = await EmbeddedStore.open(dir);
  });

  afterEach(async () => {
    try {
      await store.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  const reopen = async (): Promise<EmbeddedStore> => {
    await store.close();
    store = await EmbeddedStore.open(dir);
    return store;
  };

  describe('persistence', () => {
    it('keeps every object, with uid, resourceVersion and status, across close and reopen', async () => {
      const created = await store.create(ProbeType, probe('a', 3));
      const withStatus = await store.replaceStatus(ProbeType, { ...created, status: { phase: 'Ready' } });
      const kept = await store.create(SecretType, secret('s'));
      await reopen();
      expect(await store.get(ProbeType, NS, 'a')).toEqual(withStatus);
      expect(await store.get(SecretType, NS, 's')).toEqual(kept);
    });

    it('keeps deleted objects deleted across reopen', async () => {
      await store.create(ProbeType, probe('a'));
      await store.delete(ProbeType, NS, 'a');
      await reopen();
      expect(await store.get(ProbeType, NS, 'a')).toBeUndefined();
    });

    it('writes one JSON file per object under objects/<plural>.<group>/<namespace>/, mode 0600 in 0700 dirs', async () => {
      await store.create(SecretType, secret('s'));
      await store.create(NamespaceType, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'team-b' },
      });
      const secretFile = join(dir, 'objects', 'secrets.core', NS, 's.json');
      const namespaceFile = join(dir, 'objects', 'namespaces.core', '_cluster', 'team-b.json');
      const onDisk: unknown = JSON.parse(await readFile(secretFile, 'utf8'));
      expect(onDisk).toMatchObject({ kind: 'Secret', metadata: { name: 's', namespace: NS } });
      expect((await stat(namespaceFile)).isFile()).toBe(true);
      expect((await stat(secretFile)).mode & 0o777).toBe(0o600);
      expect((await stat(join(dir, 'objects', 'secrets.core', NS))).mode & 0o777).toBe(0o700);
    });

    it('removes leftover temp files of interrupted writes at open and never shows them as objects', async () => {
      await store.create(SecretType, secret('s'));
      await store.close();
      const leftover = join(dir, 'objects', 'secrets.core', NS, '.t.json.0123abcd.tmp');
      await writeFile(leftover, '{"half":');
      store = await EmbeddedStore.open(dir);
      const { items } = await store.list(SecretType);
      expect(items.map((s) => s.metadata.name)).toEqual(['s']);
      expect(await listFiles(join(dir, 'objects'))).not.toContain(leftover);
    });

    it('refuses to open, with Unavailable naming the file, when an object file is corrupt', async () => {
      await store.create(SecretType, secret('s'));
      await store.close();
      const file = join(dir, 'objects', 'secrets.core', NS, 's.json');
      await writeFile(file, '{"apiVersion":"v1","kind":"Secret","metadata":');
      const error = await failure(EmbeddedStore.open(dir), 'Unavailable');
      expect(error.message).toContain(file);
      await rm(file);
      store = await EmbeddedStore.open(dir); // the failed open released the lock
    });

    it('collects at open the dependents whose owner vanished in a crash before garbage collection', async () => {
      const owner = await store.create(ProbeType, probe('owner'));
      const ownerReferences = [
        { apiVersion: owner.apiVersion, kind: 'Probe', name: 'owner', uid: owner.metadata.uid ?? '' },
      ];
      await store.create(SecretType, secret('dependent', NS, { ownerReferences }));
      await store.close();
      await rm(join(dir, 'objects', 'probes.agentry.dev', NS, 'owner.json'));
      store = await EmbeddedStore.open(dir);
      expect(await store.get(SecretType, NS, 'dependent')).toBeUndefined();
    });
  });

  describe('resource versions', () => {
    it('are never reused after reopening, even when the newest object was deleted', async () => {
      await store.create(ProbeType, probe('a'));
      const newest = await store.create(ProbeType, probe('b'));
      await store.delete(ProbeType, NS, 'b');
      const afterDelete = Number((await store.list(ProbeType)).resourceVersion);
      expect(afterDelete).toBeGreaterThan(version(newest));
      await reopen();
      const next = await store.create(ProbeType, probe('c'));
      expect(version(next)).toBeGreaterThan(afterDelete);
      expect(Number((await store.list(ProbeType)).resourceVersion)).toBeGreaterThanOrEqual(version(next));
    });

    it("list reports the latest write's resourceVersion", async () => {
      await store.create(ProbeType, probe('a'));
      const latest = await store.create(SecretType, secret('s'));
      expect((await store.list(ProbeType)).resourceVersion).toBe(latest.metadata.resourceVersion);
    });

    it('increase with every write across all types', async () => {
      const a = await store.create(ProbeType, probe('a'));
      const s = await store.create(SecretType, secret('s'));
      const a2 = await store.replace(ProbeType, { ...a, spec: { size: 2 } });
      expect(version(s)).toBeGreaterThan(version(a));
      expect(version(a2)).toBeGreaterThan(version(s));
    });
  });

  describe('the data directory lock', () => {
    it('makes a second open of the same directory fail with Unavailable naming the holder', async () => {
      const error = await failure(EmbeddedStore.open(dir), 'Unavailable');
      expect(error.message).toBe(`data directory ${dir} is in use by process ${process.pid}`);
    });

    it('is released by close', async () => {
      await store.close();
      store = await EmbeddedStore.open(dir);
      expect(await store.list(SecretType)).toMatchObject({ items: [] });
    });

    it('is taken over when the process holding it is gone', async () => {
      await store.close();
      await writeFile(join(dir, 'LOCK'), `${await deadPid()}\n`);
      store = await EmbeddedStore.open(dir);
      expect((await readFile(join(dir, 'LOCK'), 'utf8')).split('\n')[0]).toBe(String(process.pid));
    });
  });

  describe('close', () => {
    it('makes every later call fail with Unavailable', async () => {
      await store.close();
      await failure(store.get(SecretType, NS, 's'), 'Unavailable');
      await failure(store.create(SecretType, secret('s')), 'Unavailable');
      store = await EmbeddedStore.open(dir);
    });

    it('ends open watches: done resolves', async () => {
      const watch = await store.watch(
        SecretType,
        { resourceVersion: '0', signal: new AbortController().signal },
        () => undefined,
      );
      await store.close();
      await expect(watch.done).resolves.toBeUndefined();
      store = await EmbeddedStore.open(dir);
    });

    it('lets writes already queued finish first', async () => {
      const write = store.create(SecretType, secret('s'));
      await store.close();
      await expect(write).resolves.toMatchObject({ metadata: { name: 's' } });
      store = await EmbeddedStore.open(dir);
      expect(await store.get(SecretType, NS, 's')).toBeDefined();
    });
  });

  describe('watch specifics', () => {
    const collect =
      <T extends KubeObject>(events: WatchEvent<T>[]) =>
      (event: WatchEvent<T>) => {
        events.push(event);
      };

    it('fails with Expired when resuming from a version older than the last reopen', async () => {
      const created = await store.create(ProbeType, probe('a'));
      await reopen();
      const watch = await store.watch(
        ProbeType,
        { resourceVersion: created.metadata.resourceVersion ?? '', signal: new AbortController().signal },
        () => undefined,
      );
      await failure(watch.done, 'Expired');
    });

    it('fails with Expired when resuming from a version older than the remembered history', async () => {
      await store.close();
      store = await EmbeddedStore.open(dir, { historyLimit: 3 });
      const first = await store.create(ProbeType, probe('a'));
      for (const name of ['b', 'c', 'd', 'e', 'f']) await store.create(ProbeType, probe(name));
      const watch = await store.watch(
        ProbeType,
        { resourceVersion: first.metadata.resourceVersion ?? '', signal: new AbortController().signal },
        () => undefined,
      );
      await failure(watch.done, 'Expired');
    });

    it('still resumes from a version the bounded history remembers', async () => {
      await store.close();
      store = await EmbeddedStore.open(dir, { historyLimit: 3 });
      for (const name of ['a', 'b', 'c', 'd', 'e']) await store.create(ProbeType, probe(name));
      const recent = await store.create(ProbeType, probe('f'));
      const events: WatchEvent<Probe>[] = [];
      const controller = new AbortController();
      const options = { resourceVersion: recent.metadata.resourceVersion ?? '', signal: controller.signal };
      const watch = await store.watch(ProbeType, options, collect(events));
      await store.create(ProbeType, probe('g'));
      await nextMacrotask();
      controller.abort();
      await watch.done;
      expect(events).toMatchObject([{ type: 'ADDED', object: { metadata: { name: 'g' } } }]);
      expect(events).toHaveLength(1);
    });

    it('resumes from a version after the last reopen', async () => {
      await reopen();
      const { resourceVersion } = await store.list(ProbeType);
      const events: WatchEvent<Probe>[] = [];
      const controller = new AbortController();
      const watch = await store.watch(
        ProbeType,
        { resourceVersion, signal: controller.signal },
        collect(events),
      );
      await store.create(ProbeType, probe('a'));
      await nextMacrotask();
      controller.abort();
      await watch.done;
      expect(events.map((e) => e.type)).toEqual(['ADDED']);
    });

    it('fails with Invalid for a malformed resourceVersion', async () => {
      const options = { resourceVersion: 'abc', signal: new AbortController().signal };
      await failure(
        store.watch(ProbeType, options, () => undefined),
        'Invalid',
      );
    });

    it('calls back from a later macrotask, never inside the write call', async () => {
      const events: WatchEvent<Probe>[] = [];
      const controller = new AbortController();
      await store.watch(ProbeType, { resourceVersion: '0', signal: controller.signal }, collect(events));
      await store.create(ProbeType, probe('a'));
      expect(events).toHaveLength(0);
      await nextMacrotask();
      expect(events).toHaveLength(1);
      controller.abort();
    });

    it('ends the watch, rejecting done with the error, when the callback throws', async () => {
      const watch = await store.watch(
        ProbeType,
        { resourceVersion: '0', signal: new AbortController().signal },
        () => {
          throw new Error('consumer bug');
        },
      );
      await store.create(ProbeType, probe('a'));
      const error = await failure(watch.done, 'Unavailable');
      expect(error.cause).toEqual(new Error('consumer bug'));
    });

    it("hands out event objects as the watcher's own copies: mutating one does not change the store", async () => {
      const events: WatchEvent<Probe>[] = [];
      const controller = new AbortController();
      await store.watch(ProbeType, { resourceVersion: '0', signal: controller.signal }, (event) => {
        if (event.type === 'ADDED') event.object.spec.size = 99;
        events.push(event);
      });
      await store.create(ProbeType, probe('a', 1));
      await nextMacrotask();
      controller.abort();
      expect(events).toHaveLength(1);
      expect((await store.get(ProbeType, NS, 'a'))?.spec.size).toBe(1);
    });
  });

  describe('validation specifics', () => {
    it('reports schema failures as path: message', async () => {
      const spec: unknown = { size: 'large' };
      const error = await failure(store.create(ProbeType, { ...probe('a'), spec } as Probe), 'Invalid');
      expect(error.message).toMatch(/spec\.size: .*number/);
    });

    it('rejects a namespace on a cluster-scoped type', async () => {
      const namespace: Namespace = {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'x', namespace: NS },
      };
      await failure(store.create(NamespaceType, namespace), 'Invalid');
      await failure(store.get(NamespaceType, NS, 'x'), 'Invalid');
    });

    it('rejects invalid label keys and values', async () => {
      await failure(store.create(ProbeType, probe('a', 1, { labels: { 'bad key': 'x' } })), 'Invalid');
      await failure(store.create(ProbeType, probe('b', 1, { labels: { ok: 'bad value!' } })), 'Invalid');
    });

    it('rejects a name longer than 253 characters', async () => {
      await failure(store.create(SecretType, secret('a'.repeat(254))), 'Invalid');
    });
  });

  describe('garbage collection scope', () => {
    const ownerRef = (owner: KubeObject) => ({
      apiVersion: owner.apiVersion,
      kind: owner.kind,
      name: owner.metadata.name,
      uid: owner.metadata.uid ?? '',
    });

    it('a cluster-scoped owner collects its dependents in every namespace', async () => {
      const owner = await store.create(NamespaceType, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'owner' },
      });
      await store.create(SecretType, secret('x', 'one', { ownerReferences: [ownerRef(owner)] }));
      await store.create(SecretType, secret('y', 'two', { ownerReferences: [ownerRef(owner)] }));
      await store.delete(NamespaceType, undefined, 'owner');
      expect((await store.list(SecretType)).items).toEqual([]);
    });

    it('a namespaced owner only counts in its own namespace: a dependent elsewhere is collected', async () => {
      const owner = await store.create(ProbeType, probe('owner'));
      await store.create(SecretType, secret('same', NS, { ownerReferences: [ownerRef(owner)] }));
      await store.create(SecretType, secret('elsewhere', 'other', { ownerReferences: [ownerRef(owner)] }));
      expect((await store.list(SecretType)).items.map((s) => s.metadata.name)).toEqual(['same']);
    });

    it('a dependent created after its owner is gone is collected at once', async () => {
      const owner = await store.create(ProbeType, probe('owner'));
      await store.delete(ProbeType, NS, 'owner');
      await store.create(SecretType, secret('late', NS, { ownerReferences: [ownerRef(owner)] }));
      expect(await store.get(SecretType, NS, 'late')).toBeUndefined();
    });
  });
});

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CRASH_ROUNDS = 25;

const StepSchema = z.object({
  event: z.enum(['ready', 'begin', 'ack']),
  op: z.enum(['create', 'replace', 'delete']).optional(),
  kind: z.enum(['Secret', 'Probe']).optional(),
  name: z.string().optional(),
  rv: z.string().optional(),
  size: z.number().optional(),
  pid: z.number().optional(),
});
type Step = z.infer<typeof StepSchema>;

/** What the store must hold for one object: its version and payload size, or nothing. */
type Expected = { rv: number; size: number } | 'absent';

/**
 * Runs the crash writer on `dir` and SIGKILLs it `delayMs` after its first acknowledged write.
 * Returns its pid and every line it printed (a pipe write of one short line is atomic).
 */
async function runUntilKilled(dir: string, delayMs: number): Promise<{ pid: number; steps: Step[] }> {
  const child = spawn(
    process.execPath,
    ['--import', './test/support/register-swc.mjs', 'test/integration/fixtures/store-crash-writer.ts', dir],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const steps: Step[] = [];
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = new Promise<NodeJS.Signals | null>((resolve) => {
    child.on('close', (_code, signal) => {
      resolve(signal);
    });
  });
  const guard = setTimeout(() => child.kill('SIGKILL'), 30_000);
  let scheduled = false;
  createInterface({ input: child.stdout }).on('line', (line) => {
    const step = StepSchema.parse(JSON.parse(line));
    steps.push(step);
    if (step.event === 'ack' && !scheduled) {
      scheduled = true;
      setTimeout(() => child.kill('SIGKILL'), delayMs);
    }
  });
  const signal = await closed;
  clearTimeout(guard);
  if (!steps.some((step) => step.event === 'ack') || signal !== 'SIGKILL' || child.pid === undefined) {
    throw new Error(`the crash writer did not run until killed (signal ${signal ?? 'none'}): ${stderr}`);
  }
  return { pid: child.pid, steps };
}

async function actualState(store: EmbeddedStore): Promise<Map<string, Expected>> {
  const state = new Map<string, Expected>();
  for (const s of (await store.list(SecretType, { namespace: 'crash' })).items) {
    state.set(`Secret/${s.metadata.name}`, { rv: version(s), size: s.data?.blob?.length ?? -1 });
  }
  for (const p of (await store.list(ProbeType, { namespace: 'crash' })).items) {
    const size = p.spec.note?.length === p.spec.size ? p.spec.size : -1; // -1: a torn payload
    state.set(`Probe/${p.metadata.name}`, { rv: version(p), size });
  }
  return state;
}

/** Whether `now` is the outcome of the in-flight write `step` having completed. */
function completes(step: Step, now: Expected, highestAcked: number): boolean {
  if (step.op === 'delete') return now === 'absent';
  return now !== 'absent' && now.rv > highestAcked && now.size > 0;
}

/** Each object is as last acknowledged, except the one write in flight, which is either undone or done. */
function violations(
  expected: ReadonlyMap<string, Expected>,
  actual: ReadonlyMap<string, Expected>,
  inFlight: Step | undefined,
  highestAcked: number,
): string[] {
  const problems: string[] = [];
  const inFlightKey = inFlight === undefined ? 'none' : `${inFlight.kind ?? ''}/${inFlight.name ?? ''}`;
  for (const key of new Set([...expected.keys(), ...actual.keys()])) {
    const before = expected.get(key) ?? 'absent';
    const now = actual.get(key) ?? 'absent';
    const unchanged = JSON.stringify(now) === JSON.stringify(before);
    const done = inFlight !== undefined && key === inFlightKey && completes(inFlight, now, highestAcked);
    if (!unchanged && !done) {
      problems.push(
        `${key}: expected ${JSON.stringify(before)}, found ${JSON.stringify(now)} (in flight: ${inFlightKey})`,
      );
    }
  }
  return problems;
}

describe('EmbeddedStore under kill -9', () => {
  it(`is left before or after the interrupted write, never corrupt (${CRASH_ROUNDS} rounds)`, async () => {
    const dir = await tempDir();
    let expected = new Map<string, Expected>();
    let highestAcked = 0;
    let acknowledged = 0;
    try {
      for (let round = 0; round < CRASH_ROUNDS; round += 1) {
        const { pid, steps } = await runUntilKilled(dir, 20 + Math.floor(Math.random() * 180));
        for (const step of steps.filter((s) => s.event === 'ack')) {
          const key = `${step.kind ?? ''}/${step.name ?? ''}`;
          const rv = Number(step.rv);
          expected.set(key, step.op === 'delete' ? 'absent' : { rv, size: step.size ?? 0 });
          highestAcked = Math.max(highestAcked, rv);
          acknowledged += 1;
        }
        const last = steps.at(-1);
        const inFlight = last?.event === 'begin' ? last : undefined;
        expect((await readFile(join(dir, 'LOCK'), 'utf8')).split('\n')[0]).toBe(String(pid));

        const store = await EmbeddedStore.open(dir);
        try {
          const actual = await actualState(store);
          expect(violations(expected, actual, inFlight, highestAcked)).toEqual([]);
          const files = await listFiles(join(dir, 'objects'));
          expect(files.filter((f) => !f.endsWith('.json') || f.split('/').at(-1)?.startsWith('.'))).toEqual(
            [],
          );
          expect(files).toHaveLength(actual.size);
          const marker = await store.create(SecretType, secret(`marker-${round}`, 'verify'));
          expect(version(marker)).toBeGreaterThan(highestAcked);
          await store.delete(SecretType, 'verify', `marker-${round}`);
          expected = actual;
          highestAcked = Number((await store.list(SecretType)).resourceVersion);
        } finally {
          await store.close();
        }
      }
      expect(acknowledged).toBeGreaterThan(CRASH_ROUNDS);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
