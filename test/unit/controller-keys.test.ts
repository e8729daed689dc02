import { describe, expect, it } from '@jest/globals';
import { NamespaceType } from '../../crds/core.js';
import type { KubeObject } from '../../crds/resource.js';
import { controllerOwnerOf, parseRequestKey, requestKey } from '../../operator/controller/controller.js';
import { LeaderElector } from '../../operator/controller/leader-election.js';
import { createLogger } from '../../platform/log.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { ProbeType } from '../contracts/probe.js';

const owned = (ownerReferences: NonNullable<KubeObject['metadata']['ownerReferences']>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 's', namespace: 'ns', ownerReferences },
});

const ref = { apiVersion: 'agentry.dev/v1alpha1', kind: 'Probe', name: 'p', uid: 'u1' };

describe('queue keys', () => {
  it('round-trip a namespaced request', () => {
    expect(parseRequestKey(requestKey({ namespace: 'ns', name: 'a' }))).toEqual({
      namespace: 'ns',
      name: 'a',
    });
  });

  it('round-trip a cluster-scoped request without a namespace', () => {
    expect(parseRequestKey(requestKey({ name: 'a' }))).toEqual({ namespace: undefined, name: 'a' });
  });
});

describe('controllerOwnerOf', () => {
  it('maps an object to its controlling owner of the primary kind, in its namespace', () => {
    expect(controllerOwnerOf(ProbeType, owned([{ ...ref, controller: true }]))).toEqual([
      { namespace: 'ns', name: 'p' },
    ]);
  });

  it('ignores owner references that are not the controller', () => {
    expect(controllerOwnerOf(ProbeType, owned([{ ...ref, controller: false }, ref]))).toEqual([]);
  });

  it('ignores a controller of another kind or API version', () => {
    const other = [
      { ...ref, kind: 'Other', controller: true },
      { ...ref, apiVersion: 'agentry.dev/v2', controller: true },
    ];
    expect(controllerOwnerOf(ProbeType, owned(other))).toEqual([]);
  });

  it('maps to a cluster-scoped owner without a namespace', () => {
    const namespaceRef = { apiVersion: 'v1', kind: 'Namespace', name: 'team', uid: 'u', controller: true };
    expect(controllerOwnerOf(NamespaceType, owned([namespaceRef]))).toEqual([
      { namespace: undefined, name: 'team' },
    ]);
  });
});

describe('LeaderElector', () => {
  it('refuses a renew deadline that is not shorter than the lease', () => {
    const make = (): LeaderElector =>
      new LeaderElector({
        store: {} as ResourceStore,
        logger: createLogger({ level: 'silent' }),
        namespace: 'ns',
        name: 'lease',
        leaseDurationMs: 1000,
        renewDeadlineMs: 1000,
        retryPeriodMs: 100,
      });
    expect(make).toThrow(/lease duration > renew deadline/);
  });

  it('names itself by host, process and a random suffix', () => {
    const options = {
      store: {} as ResourceStore,
      logger: createLogger({ level: 'silent' }),
      namespace: 'n',
      name: 'l',
    };
    const a = new LeaderElector(options);
    const b = new LeaderElector(options);
    expect(a.identity).toContain(`_${process.pid}_`);
    expect(a.identity).not.toBe(b.identity);
  });
});
