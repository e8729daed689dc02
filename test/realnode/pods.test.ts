// Pods on the real node really run: a container in containerd, an address on the pod bridge,
// a filesystem kubectl exec can read.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { BlockList } from 'node:net';
import {
  busyboxPod,
  createNamespace,
  deleteNamespace,
  exec,
  kubectl,
  nodeContainerIds,
  runPod,
  testRealNode,
} from './support.js';

const inCidr = (ip: string, cidr: string): boolean => {
  const [network = '', prefix = ''] = cidr.split('/');
  const list = new BlockList();
  list.addSubnet(network, Number(prefix), 'ipv4');
  return list.check(ip, 'ipv4');
};

describe('pods on the real node', () => {
  let namespace: string;
  beforeAll(async () => {
    namespace = await createNamespace('pods');
  });
  afterAll(async () => {
    await deleteNamespace(namespace);
  });

  it('runs a pod on the real node whose file kubectl exec reads, with a pod-CIDR address and a containerd container', async () => {
    const node = testRealNode();
    const marker = `written-${Date.now()}`;
    const ip = await runPod(
      busyboxPod('writer', namespace, `echo ${marker} > /tmp/marker && exec sleep 3600`),
      'writer',
      namespace,
    );
    expect(await kubectl(['get', 'pod', 'writer', '-n', namespace, '-o', 'jsonpath={.spec.nodeName}'])).toBe(
      node.nodeName,
    );
    expect((await exec(namespace, 'writer', ['cat', '/tmp/marker'])).trim()).toBe(marker);
    expect(inCidr(ip, node.podCidr)).toBe(true);
    const statuses = await kubectl([
      'get',
      'pod',
      'writer',
      '-n',
      namespace,
      '-o',
      'jsonpath={.status.containerStatuses[0].containerID}',
    ]);
    const containerId = statuses.replace(/^containerd:\/\//, '');
    expect(containerId).toMatch(/^[0-9a-f]{64}$/);
    expect(await nodeContainerIds()).toContain(containerId);
  }, 180_000);

  it('leaves the real node without a KWOK annotation', async () => {
    const node = testRealNode();
    const annotations = await kubectl([
      'get',
      'node',
      node.nodeName,
      '-o',
      'jsonpath={.metadata.annotations}',
    ]);
    expect(annotations).not.toContain('kwok.x-k8s.io');
    const version = await kubectl([
      'get',
      'node',
      node.nodeName,
      '-o',
      'jsonpath={.status.nodeInfo.kubeletVersion}',
    ]);
    expect(version).toMatch(/^v1\.\d+\.\d+$/);
  });
});
