/**
 * What every section of the resource store conformance suite shares: the fixture a store test file
 * hands in, the per-test state (store, namespace, run label), builders for the objects a test writes,
 * and the waits and failure checks. Every object a test creates carries its own names and a
 * `contract-run` label unique to the test, and lists and watches select on that label, so tests do
 * not see each other even in a shared namespace. Waits poll with generous timeouts, never fixed sleeps.
 */
import { afterEach, beforeEach, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { SecretType } from '../../../crds/core.js';
import type { Secret } from '../../../crds/core.js';
import type { OwnerReference } from '../../../crds/meta.js';
import { apiVersionOf } from '../../../crds/resource.js';
import type { KubeObject, ResourceType } from '../../../crds/resource.js';
import type { ResourceStore, StoreErrorReason, WatchOptions } from '../../../platform/store/types.js';
import { StoreError } from '../../../platform/store/types.js';
import { ProbeType } from '../probe.js';
import type { Probe, ProbeSpec, ProbeStatus } from '../probe.js';

export interface StoreFixture {
  store: ResourceStore;
  /** An existing namespace the suite may create objects in. */
  namespace: string;
  cleanup(): Promise<void>;
}

/** How long to wait for asynchronous effects (watch delivery, a cluster's garbage collector). */
const WAIT_MS = 30_000;
/** Per test and hook: room for one full wait plus a slow cluster's round trips. */
const TEST_TIMEOUT_MS = 2 * WAIT_MS;
export const RUN_LABEL = 'contract-run';
export const FINALIZER = 'agentry.dev/contract-hold';
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

type Change<T> = { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T };

export interface Recording<T> {
  readonly events: Change<T>[];
  /** Waits for at least `count` events (BOOKMARKs are skipped) and returns the first `count`. */
  take(count: number): Promise<Change<T>[]>;
  /** Aborts the watch and waits for `done`. */
  stop(): Promise<void>;
  readonly done: Promise<void>;
}

const summary = <T extends KubeObject>(events: readonly Change<T>[]): string =>
  JSON.stringify(
    events.map((e) => `${e.type} ${e.object.metadata.name} @${e.object.metadata.resourceVersion ?? '?'}`),
  );

/** Starts a watch that records its events, for a test to take and inspect. */
export async function record<T extends KubeObject>(
  store: ResourceStore,
  type: ResourceType<T>,
  options: Omit<WatchOptions, 'signal'>,
): Promise<Recording<T>> {
  const controller = new AbortController();
  const events: Change<T>[] = [];
  let ended: unknown;
  const watch = await store.watch(type, { ...options, signal: controller.signal }, (event) => {
    if (event.type !== 'BOOKMARK') events.push({ type: event.type, object: event.object });
  });
  watch.done.then(
    () => (ended = ended ?? new Error('the watch ended')),
    (err: unknown) => (ended = err),
  );
  return {
    events,
    done: watch.done,
    async take(count) {
      await eventually(
        () => `${count} watch events, got ${summary(events)}`,
        () => {
          if (events.length < count && ended !== undefined) {
            throw ended instanceof Error ? ended : new Error(`the watch ended: ${JSON.stringify(ended)}`);
          }
          return events.length >= count;
        },
      );
      return events.slice(0, count);
    },
    async stop() {
      controller.abort();
      await watch.done;
    },
  };
}

export async function eventually(
  what: string | (() => string),
  check: () => boolean | Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${WAIT_MS} ms waiting for ${typeof what === 'string' ? what : what()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Awaits a call expected to fail and checks that it failed with a StoreError of `reason`. */
export async function failure(call: Promise<unknown>, reason: StoreErrorReason): Promise<StoreError> {
  const outcome = await call.then(
    (value: unknown) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected a StoreError ${reason}, but the call succeeded`);
  if (!(outcome.error instanceof StoreError)) throw outcome.error;
  expect(outcome.error.reason).toBe(reason);
  return outcome.error;
}

export const ownerRef = (owner: KubeObject): OwnerReference => ({
  apiVersion: owner.apiVersion,
  kind: owner.kind,
  name: owner.metadata.name,
  uid: owner.metadata.uid ?? '',
});

/** `it` with a timeout that fits the suite's waits (jest's default of 5 s does not). */
export const test = (title: string, body: () => Promise<void>): void => {
  it(title, body, TEST_TIMEOUT_MS);
};

/** The state of the running test and builders for the objects it writes. */
export class StoreContext {
  #fixture: StoreFixture | undefined;
  #run = '';

  /** Opens a fresh store before each test and releases what the test left behind after it. */
  constructor(makeStore: () => Promise<StoreFixture>) {
    beforeEach(async () => {
      this.#fixture = await makeStore();
      this.#run = randomBytes(4).toString('hex');
    }, TEST_TIMEOUT_MS);

    afterEach(async () => {
      await this.releaseFinalizers(ProbeType).catch(() => undefined);
      await this.releaseFinalizers(SecretType).catch(() => undefined);
      await this.fixture.cleanup();
    }, TEST_TIMEOUT_MS);
  }

  private get fixture(): StoreFixture {
    if (this.#fixture === undefined) throw new Error('the store is only open inside a test');
    return this.#fixture;
  }

  get store(): ResourceStore {
    return this.fixture.store;
  }

  get ns(): string {
    return this.fixture.namespace;
  }

  /** The label value unique to the running test. */
  get run(): string {
    return this.#run;
  }

  readonly n = (base: string): string => `${base}-${this.run}`;

  readonly runSelector = (extra?: string): string =>
    [`${RUN_LABEL}=${this.run}`, extra].filter(Boolean).join(',');

  readonly probe = (
    base: string,
    spec: ProbeSpec = { size: 1 },
    metadata: Partial<Probe['metadata']> = {},
    status?: ProbeStatus,
  ): Probe => ({
    apiVersion: apiVersionOf(ProbeType),
    kind: 'Probe',
    metadata: {
      name: this.n(base),
      namespace: this.ns,
      ...metadata,
      labels: { [RUN_LABEL]: this.run, ...metadata.labels },
    },
    spec,
    ...(status === undefined ? {} : { status }),
  });

  readonly secret = (base: string, metadata: Partial<Secret['metadata']> = {}): Secret => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: this.n(base),
      namespace: this.ns,
      ...metadata,
      labels: { [RUN_LABEL]: this.run, ...metadata.labels },
    },
    type: 'Opaque',
    data: { token: Buffer.from('s3cret').toString('base64') },
  });

  readonly getProbe = (base: string): Promise<Probe | undefined> =>
    this.store.get(ProbeType, this.ns, this.n(base));

  readonly getSecret = (base: string): Promise<Secret | undefined> =>
    this.store.get(SecretType, this.ns, this.n(base));

  readonly gone = (what: string, read: () => Promise<KubeObject | undefined>): Promise<void> =>
    eventually(`${what} to be deleted`, async () => (await read()) === undefined);

  /** Strips this test's finalizers so that a failed test cannot leave objects stuck in a cluster. */
  private async releaseFinalizers<T extends KubeObject>(type: ResourceType<T>): Promise<void> {
    const { items } = await this.store.list(type, { namespace: this.ns, labelSelector: this.runSelector() });
    for (const item of items.filter((i) => (i.metadata.finalizers ?? []).length > 0)) {
      await this.store
        .replace(type, { ...item, metadata: { ...item.metadata, finalizers: [] } })
        .catch(() => undefined);
    }
  }
}
