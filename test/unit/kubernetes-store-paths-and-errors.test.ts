// How the KubernetesStore addresses objects and maps API server answers and network failures to
// store errors.
import { describe, expect, it } from '@jest/globals';
import { NamespaceType, SecretType } from '../../crds/core.js';
import {
  errorFromNetwork,
  errorFromResponse,
  KubernetesApiError,
  reasonFor,
} from '../../platform/store/kubernetes/errors.js';
import { collectionPath, objectPath } from '../../platform/store/kubernetes/paths.js';
import { StoreError } from '../../platform/store/types.js';
import { ClusterProbeType, ProbeType, status } from './kubernetes-store-support.js';

describe('paths', () => {
  it('builds core and custom, namespaced and cluster-scoped paths', () => {
    expect(collectionPath(SecretType, 'ns-a')).toBe('/api/v1/namespaces/ns-a/secrets');
    expect(collectionPath(SecretType, undefined)).toBe('/api/v1/secrets');
    expect(objectPath(NamespaceType, undefined, 'ns-a', 'status')).toBe('/api/v1/namespaces/ns-a/status');
    expect(objectPath(NamespaceType, 'ignored', 'ns-a')).toBe('/api/v1/namespaces/ns-a');
    expect(objectPath(ProbeType, 'ns-a', 'p1', 'status')).toBe(
      '/apis/agentry.dev/v1alpha1/namespaces/ns-a/probes/p1/status',
    );
    expect(objectPath(ClusterProbeType, undefined, 'p1')).toBe('/apis/agentry.dev/v1alpha1/clusterprobes/p1');
  });

  it('refuses a namespaced object without a namespace', () => {
    expect(() => objectPath(ProbeType, undefined, 'p1')).toThrow(StoreError);
  });
});

describe('error mapping', () => {
  it.each([
    [404, 'NotFound', 'NotFound'],
    [409, 'AlreadyExists', 'AlreadyExists'],
    [409, 'Conflict', 'Conflict'],
    [410, 'Expired', 'Expired'],
    [410, 'Gone', 'Expired'],
    [422, 'Invalid', 'Invalid'],
    [400, 'BadRequest', 'Invalid'],
    [401, 'Unauthorized', 'Forbidden'],
    [403, 'Forbidden', 'Forbidden'],
    [429, 'TooManyRequests', 'Unavailable'],
    [500, 'InternalError', 'Unavailable'],
    [503, 'ServiceUnavailable', 'Unavailable'],
  ])('maps %i %s to %s', (code, reason, expected) => {
    expect(reasonFor(code, reason)).toBe(expected);
  });

  it("keeps the API server's message and the answer as cause", () => {
    const message =
      'Probe.agentry.dev "p1" is invalid: spec.size: Invalid value: "string": spec.size in body must be of type integer';
    const err = errorFromResponse(
      422,
      status(422, 'Invalid', message, 'p1'),
      'creating probes.agentry.dev "p1"',
    );
    expect(err.reason).toBe('Invalid');
    expect(err.message).toBe(`creating probes.agentry.dev "p1": ${message}`);
    expect(err.cause).toBeInstanceOf(KubernetesApiError);
    expect(err.cause).toMatchObject({ code: 422, status: { reason: 'Invalid' } });
  });

  it('describes an answer that is not a Status', () => {
    const err = errorFromResponse(404, '404 page not found\n', 'reading x');
    expect(err).toMatchObject({ reason: 'NotFound', message: 'reading x: HTTP 404: 404 page not found' });
  });

  it('maps network failures to Unavailable, keeping the cause', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' });
    const err = errorFromNetwork(cause, 'listing secrets');
    expect(err).toMatchObject({
      reason: 'Unavailable',
      message: 'listing secrets: connect ECONNREFUSED 127.0.0.1:6443',
    });
    expect(err.cause).toBe(cause);
  });
});
