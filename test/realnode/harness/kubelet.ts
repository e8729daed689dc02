// The kubelet and kube-proxy of the real node.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { clusterPkiDir } from '../../cluster/harness/cluster.js';
import type { ClusterState } from '../../cluster/harness/cluster.js';
import { CLUSTER_DOMAIN, NODE_IP, NODE_NAME, POD_CIDR, REAL_NODE_LABEL } from './layout.js';
import type { NodePaths } from './layout.js';
import { startDaemon } from './processes.js';

function kubeletConfiguration(paths: NodePaths, cluster: ClusterState): unknown {
  return {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    // Listeners: the node address (the apiserver's exec/logs path) and loopback, never 0.0.0.0.
    address: NODE_IP,
    port: 10250,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      // The apiserver presents kwokctl's admin certificate (see the kwokctl patches).
      x509: { clientCAFile: join(clusterPkiDir(cluster), 'ca.crt') },
    },
    authorization: { mode: 'Webhook' },
    containerRuntimeEndpoint: `unix://${paths.containerdSocket}`,
    cgroupDriver: 'cgroupfs',
    // This host has cgroup v1 (hybrid); the kubelet refuses it unless told otherwise.
    failCgroupV1: false,
    failSwapOn: false,
    podCIDR: POD_CIDR,
    clusterDNS: [NODE_IP],
    clusterDomain: CLUSTER_DOMAIN,
    // Pods get only the cluster DNS: no search domains or resolvers of the host.
    resolvConf: '',
    podLogsDir: paths.podLogs,
    // The disk is shared with builds: evict or collect images only when it is really full.
    evictionHard: {
      'memory.available': '50Mi',
      'nodefs.available': '1%',
      'nodefs.inodesFree': '1%',
      'imagefs.available': '1%',
    },
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    serializeImagePulls: false,
    maxPods: 110,
  };
}

/** Starts the kubelet; it registers the node itself. */
export async function startKubelet(
  paths: NodePaths,
  cluster: ClusterState,
  kubelet: string,
): Promise<number> {
  await mkdir(paths.kubeletRoot, { recursive: true });
  await mkdir(paths.podLogs, { recursive: true });
  await writeFile(paths.kubeletConfig, stringify(kubeletConfiguration(paths, cluster)));
  return startDaemon(
    'kubelet',
    kubelet,
    [
      '--config',
      paths.kubeletConfig,
      '--kubeconfig',
      cluster.kubeconfig,
      '--root-dir',
      paths.kubeletRoot,
      '--cert-dir',
      join(paths.kubeletRoot, 'pki'),
      '--hostname-override',
      NODE_NAME,
      '--node-ip',
      NODE_IP,
      '--node-labels',
      `${REAL_NODE_LABEL}=true`,
    ],
    paths.logs,
  );
}

function kubeProxyConfiguration(cluster: ClusterState): unknown {
  return {
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    mode: 'iptables',
    clientConnection: { kubeconfig: cluster.kubeconfig },
    hostnameOverride: NODE_NAME,
    bindAddress: NODE_IP,
    healthzBindAddress: '127.0.0.1:10256',
    metricsBindAddress: '127.0.0.1:10249',
    clusterCIDR: POD_CIDR,
    detectLocalMode: 'ClusterCIDR',
    nodePortAddresses: [`${NODE_IP}/32`],
    // Leave route_localnet and the conntrack sysctls alone.
    iptables: { localhostNodePorts: false },
    conntrack: { maxPerCore: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
  };
}

export async function startKubeProxy(
  paths: NodePaths,
  cluster: ClusterState,
  kubeProxy: string,
): Promise<number> {
  await writeFile(paths.kubeProxyConfig, stringify(kubeProxyConfiguration(cluster)));
  return startDaemon('kube-proxy', kubeProxy, ['--config', paths.kubeProxyConfig], paths.logs);
}
