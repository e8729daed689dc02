// The kwokctl configuration of a cluster with a real node: the harness's loopback configuration
// plus the patches a real kubelet and in-cluster clients need.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { z } from 'zod';
import { LOOPBACK_KWOKCTL_CONFIG, clusterPkiDir } from '../../cluster/harness/cluster.js';
import type { ClusterState } from '../../cluster/harness/cluster.js';
import { CONTROL_PLANE_IP, KUBERNETES_SERVICE_IP, SERVICE_CIDR } from './layout.js';

/** The annotation every fake node in test/cluster/fixtures/nodes.yaml carries. */
export const FAKE_NODE_SELECTOR = 'kwok.x-k8s.io/node=fake';

const arg = (key: string, value: string, override = false) => ({ key, value, override });

const LoopbackConfigSchema = z.looseObject({ options: z.looseObject({}) });

export async function writeKwokctlConfig(
  path: string,
  cluster: Pick<ClusterState, 'workdir' | 'name'>,
): Promise<string> {
  const loopback = LoopbackConfigSchema.parse(parse(await readFile(LOOPBACK_KWOKCTL_CONFIG, 'utf8')));
  const pki = clusterPkiDir(cluster);
  const config = {
    ...loopback,
    options: {
      ...loopback.options,
      // Pods reach the apiserver as https://kubernetes.default.svc (the ClusterIP), which kube-proxy
      // sends to the control-plane host's address.
      kubeApiserverCertSANs: [KUBERNETES_SERVICE_IP, CONTROL_PLANE_IP],
    },
    componentsPatches: [
      {
        // KWOK must never adopt the real node: it would fake its pods as Running with made-up IPs.
        name: 'kwok-controller',
        extraArgs: [
          arg('manage-all-nodes', 'false', true),
          arg('manage-nodes-with-annotation-selector', FAKE_NODE_SELECTOR),
        ],
      },
      {
        name: 'kube-apiserver',
        extraArgs: [
          arg('kubelet-preferred-address-types', 'InternalIP'),
          // The `kubernetes` Service's endpoint: the control-plane host, forwarded to the loopback
          // listener. Not the node address: pod-to-own-node traffic escapes NetworkPolicy.
          arg('advertise-address', CONTROL_PLANE_IP),
          arg('service-cluster-ip-range', SERVICE_CIDR),
          // exec, logs and port-forward go apiserver -> kubelet, which accepts only kwokctl's CA.
          arg('kubelet-client-certificate', join(pki, 'admin.crt')),
          arg('kubelet-client-key', join(pki, 'admin.key')),
        ],
      },
    ],
  };
  await writeFile(path, stringify(config));
  return path;
}
