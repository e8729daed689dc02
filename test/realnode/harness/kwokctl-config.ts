// The kwokctl configuration of a cluster with a real node: the harness's loopback configuration
// plus the patches a real kubelet and in-cluster clients need.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { z } from 'zod';
import { LOOPBACK_KWOKCTL_CONFIG, clusterPkiDir } from '../../cluster/harness/cluster.js';
import { run } from '../../cluster/harness/tools.js';
import type { ClusterState } from '../../cluster/harness/cluster.js';
import { CONTROL_PLANE_IP, KUBERNETES_SERVICE_IP, SERVICE_CIDR } from './layout.js';

/** The annotation every fake node in test/cluster/fixtures/nodes.yaml carries. */
export const FAKE_NODE_SELECTOR = 'kwok.x-k8s.io/node=fake';

const arg = (key: string, value: string, override = false) => ({ key, value, override });

const LoopbackConfigSchema = z.looseObject({ options: z.looseObject({}) });

/** The client name the aggregator presents to extension API servers. */
const FRONT_PROXY_CLIENT = 'front-proxy-client';

/**
 * A front-proxy CA and the aggregator's client certificate, as kubeadm makes them: extension API
 * servers (KubeVirt's virt-api, CDI's apiserver) read the CA from the extension-apiserver-authentication
 * ConfigMap, which the apiserver publishes only when it has one, and refuse to start without it.
 */
async function writeFrontProxyPki(dir: string): Promise<{ ca: string; cert: string; key: string }> {
  await mkdir(dir, { recursive: true });
  const [ca, caKey, cert, key, csr] = [
    join(dir, 'ca.crt'),
    join(dir, 'ca.key'),
    join(dir, 'client.crt'),
    join(dir, 'client.key'),
    join(dir, 'client.csr'),
  ];
  const ext = join(dir, 'client.ext');
  await writeFile(ext, 'extendedKeyUsage=clientAuth\n');
  const days = ['-days', '7'];
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    caKey,
    '-out',
    ca,
    ...days,
    '-subj',
    '/CN=front-proxy-ca',
  ]);
  await run('openssl', [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    key,
    '-out',
    csr,
    '-subj',
    `/CN=${FRONT_PROXY_CLIENT}`,
  ]);
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    ca,
    '-CAkey',
    caKey,
    '-CAcreateserial',
    '-out',
    cert,
    ...days,
    '-extfile',
    ext,
  ]);
  return { ca, cert, key };
}

export async function writeKwokctlConfig(
  path: string,
  cluster: Pick<ClusterState, 'workdir' | 'name'>,
): Promise<string> {
  const loopback = LoopbackConfigSchema.parse(parse(await readFile(LOOPBACK_KWOKCTL_CONFIG, 'utf8')));
  const pki = clusterPkiDir(cluster);
  const frontProxy = await writeFrontProxyPki(join(cluster.workdir, 'front-proxy'));
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
          // API aggregation (KubeVirt's subresources, CDI's upload API), straight to the pods' IPs.
          arg('requestheader-client-ca-file', frontProxy.ca),
          arg('requestheader-allowed-names', FRONT_PROXY_CLIENT),
          arg('requestheader-username-headers', 'X-Remote-User'),
          arg('requestheader-group-headers', 'X-Remote-Group'),
          arg('requestheader-extra-headers-prefix', 'X-Remote-Extra-'),
          arg('proxy-client-cert-file', frontProxy.cert),
          arg('proxy-client-key-file', frontProxy.key),
          arg('enable-aggregator-routing', 'true'),
        ],
      },
    ],
  };
  await writeFile(path, stringify(config));
  return path;
}
