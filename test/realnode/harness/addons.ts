// What a real cluster runs beside the kubelet, here as host processes: kube-router (NetworkPolicy),
// CoreDNS and local-path-provisioner.
import { writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import type { ClusterState } from '../../cluster/harness/cluster.js';
import { BUSYBOX_IMAGE, CLUSTER_DOMAIN, NODE_IP, NODE_NAME, SERVICE_CIDR } from './layout.js';
import type { NodePaths } from './layout.js';
import { startDaemon } from './processes.js';

/** kube-router as a NetworkPolicy controller only (no routing, no service proxy, no CNI). */
export async function startKubeRouter(
  paths: NodePaths,
  cluster: ClusterState,
  binary: string,
): Promise<number> {
  return startDaemon(
    'kube-router',
    binary,
    [...kubeRouterFlags(cluster), '--run-firewall=true', '--run-router=false', '--run-service-proxy=false'],
    paths.logs,
  );
}

export const kubeRouterFlags = (cluster: Pick<ClusterState, 'kubeconfig'>): string[] => [
  `--kubeconfig=${cluster.kubeconfig}`,
  `--hostname-override=${NODE_NAME}`,
  '--enable-cni=false',
  '--enable-ipv6=false',
  `--service-cluster-ip-range=${SERVICE_CIDR}`,
  // Its health and metrics servers would listen on every address.
  '--health-port=0',
  '--metrics-port=0',
];

/** CoreDNS on the node address, answering the cluster domain from the API and nothing else. */
export async function startCoreDns(paths: NodePaths, cluster: ClusterState, binary: string): Promise<number> {
  // No `forward`: pods must not reach resolvers outside the machine.
  const corefile = `.:53 {
    bind ${NODE_IP}
    errors
    kubernetes ${CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {
        kubeconfig ${cluster.kubeconfig}
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 5
}
`;
  await writeFile(paths.corefile, corefile);
  return startDaemon('coredns', binary, ['-conf', paths.corefile], paths.logs);
}

export const LOCAL_PATH_NAMESPACE = 'local-path-storage';
const LOCAL_PATH_SERVICE_ACCOUNT = 'local-path-provisioner-service-account';
const LOCAL_PATH_CONFIG_MAP = 'local-path-config';

/** The StorageClass (the cluster's default), its namespace, service account and helper scripts. */
export function localPathObjects(): string {
  const scripts = {
    setup: '#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"\n',
    teardown: '#!/bin/sh\nset -eu\nrm -rf "$VOL_DIR"\n',
  };
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: LOCAL_PATH_NAMESPACE } },
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: LOCAL_PATH_SERVICE_ACCOUNT, namespace: LOCAL_PATH_NAMESPACE },
    },
    {
      // The helper pods mount their scripts from this ConfigMap.
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: LOCAL_PATH_CONFIG_MAP, namespace: LOCAL_PATH_NAMESPACE },
      data: scripts,
    },
    {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: {
        name: 'local-path',
        annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' },
      },
      provisioner: 'rancher.io/local-path',
      volumeBindingMode: 'WaitForFirstConsumer',
      reclaimPolicy: 'Delete',
    },
  ]
    .map((object) => stringify(object))
    .join('---\n');
}

export async function startLocalPathProvisioner(
  paths: NodePaths,
  cluster: ClusterState,
  binary: string,
): Promise<number> {
  await writeFile(
    paths.localPathConfig,
    JSON.stringify({
      nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [paths.localPathStorage] }],
    }),
  );
  await writeFile(
    paths.localPathHelperPod,
    stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'helper-pod' },
      spec: { containers: [{ name: 'helper-pod', image: BUSYBOX_IMAGE, imagePullPolicy: 'Never' }] },
    }),
  );
  return startDaemon(
    'local-path-provisioner',
    binary,
    [
      '--debug',
      'start',
      '--kubeconfig',
      cluster.kubeconfig,
      '--namespace',
      LOCAL_PATH_NAMESPACE,
      '--config',
      paths.localPathConfig,
      '--helper-pod-file',
      paths.localPathHelperPod,
      '--helper-image',
      BUSYBOX_IMAGE,
      '--service-account-name',
      LOCAL_PATH_SERVICE_ACCOUNT,
      '--configmap-name',
      LOCAL_PATH_CONFIG_MAP,
    ],
    paths.logs,
  );
}
