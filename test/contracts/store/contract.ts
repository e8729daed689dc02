/**
 * The resource store conformance suite: what every ResourceStore (embedded, Kubernetes) guarantees,
 * which is what the Kubernetes API guarantees. It uses nothing but the ResourceStore interface, one
 * namespace handed in by the factory, the core Secret type and the `Probe` custom resource of
 * ../probe.ts (a cluster harness installs a CRD for ProbeType), so it runs unchanged against a real
 * kube-apiserver. One file per section of the contract; context.ts holds what they share.
 */
import { describe } from '@jest/globals';
import { StoreContext } from './context.js';
import type { StoreFixture } from './context.js';
import { describeCreate } from './create.js';
import { describeDelete } from './delete.js';
import { describeGarbageCollection } from './garbage-collection.js';
import { describeGetAndList } from './get-and-list.js';
import { describeReplaceStatus } from './replace-status.js';
import { describeReplace } from './replace.js';
import { describeWatch } from './watch.js';

export { ProbeSpecSchema, ProbeStatusSchema, ProbeType } from '../probe.js';
export type { Probe, ProbeSpec, ProbeStatus } from '../probe.js';
export type { StoreFixture } from './context.js';

export function describeStoreContract(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`${name} conforms to the resource store contract`, () => {
    const ctx = new StoreContext(makeStore);
    describeCreate(ctx);
    describeGetAndList(ctx);
    describeReplace(ctx);
    describeReplaceStatus(ctx);
    describeDelete(ctx);
    describeGarbageCollection(ctx);
    describeWatch(ctx);
  });
}
