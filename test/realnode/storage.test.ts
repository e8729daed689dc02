// Dynamic volumes on the real node: local-path-provisioner (the default StorageClass).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { busyboxPod, createNamespace, deleteNamespace, exec, kubectl, runPod } from './support.js';

const claim = (namespace: string): string =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    // No storageClassName: the default class (local-path) must pick it up.
    metadata: { name: 'data', namespace },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '16Mi' } } },
  });

const podWithClaim = (namespace: string, script: string): string =>
  busyboxPod('keeper', namespace, script, {
    volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
    volumeMounts: [{ name: 'data', mountPath: '/data' }],
  });

describe('storage on the real node', () => {
  let namespace: string;
  beforeAll(async () => {
    namespace = await createNamespace('storage');
  });
  afterAll(async () => {
    await deleteNamespace(namespace);
  });

  it('binds a local-path claim on the real node whose data survives recreating the pod', async () => {
    await kubectl(['apply', '-f', '-'], claim(namespace));
    const marker = `kept-${Date.now()}`;
    await runPod(
      podWithClaim(namespace, `echo ${marker} > /data/marker && exec sleep 3600`),
      'keeper',
      namespace,
    );
    const phase = await kubectl(['get', 'pvc', 'data', '-n', namespace, '-o', 'jsonpath={.status.phase}']);
    expect(phase).toBe('Bound');
    const storageClass = await kubectl([
      'get',
      'pvc',
      'data',
      '-n',
      namespace,
      '-o',
      'jsonpath={.spec.storageClassName}',
    ]);
    expect(storageClass).toBe('local-path');

    await kubectl(['delete', 'pod', 'keeper', '-n', namespace, '--wait=true', '--timeout=120s']);
    await runPod(podWithClaim(namespace, 'exec sleep 3600'), 'keeper', namespace);
    expect((await exec(namespace, 'keeper', ['cat', '/data/marker'])).trim()).toBe(marker);
  }, 240_000);
});
