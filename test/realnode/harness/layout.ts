// The fixed addresses and names of the real node, and where its pieces live under the run's workdir.
import { join } from 'node:path';
import { z } from 'zod';
import { ClusterStateSchema } from '../../cluster/harness/cluster.js';

/** The one real node of the cluster (KWOK's fake nodes sit beside it). */
export const NODE_NAME = 'agentry-real-node';
/** The label the node registers with; tests select it with a nodeSelector. */
export const REAL_NODE_LABEL = 'agentry.dev/real-node';

/**
 * A port-less bridge carries the node address: the kubelet refuses loopback, and the kernel here has
 * no dummy interface. Every host listener the pods need (apiserver, moto, DNS) binds this address.
 */
export const NODE_BRIDGE = 'agentry-node';
export const NODE_IP = '10.250.0.1';
/**
 * "The control-plane host": a network namespace of its own, joined to the host by a veth pair and a
 * /32 route each way. The kube-apiserver advertises this address and moto is reached at it, so pod
 * traffic to them is forwarded (and policed) as in a real cluster, where they do not run on the
 * worker: NetworkPolicy never governs traffic between a pod and its own node (see NOTES.md).
 */
export const CONTROL_PLANE_IP = '10.250.1.1';
/** The host's end of the control-plane host's veth (its peer inside is CONTROL_PLANE_PEER). */
export const CONTROL_PLANE_LINK = 'agentry-cp';
export const CONTROL_PLANE_PEER = 'cp0';
/** The CNI bridge of the pods; its .1 is their gateway. */
export const POD_BRIDGE = 'agentry-cni0';
export const POD_CIDR = '10.244.0.0/24';
export const SERVICE_CIDR = '10.96.0.0/24';
/** The first address of the service range: the `kubernetes` Service's ClusterIP. */
export const KUBERNETES_SERVICE_IP = '10.96.0.1';
export const CLUSTER_DOMAIN = 'cluster.local';
/** The CNI network's name; also names host-local's and libcni's files. */
export const CNI_NETWORK = 'agentry-realnode';

/** The pause image under the name containerd's sandbox_image expects. */
export const PAUSE_IMAGE = 'registry.k8s.io/pause:3.10';
/** A tiny image (Debian's static busybox) for test pods and local-path's helper pods. */
export const BUSYBOX_IMAGE = 'localhost/agentry-realnode-busybox:1';

/** One real node per machine: the lock's file. */
export const LOCK_FILE = '/run/lock/agentry-realnode.lock';
export const WORKDIR_PREFIX = 'agentry-realnode-';

/**
 * Paths under the run's workdir; the kubelet's root too unless the node was started with another
 * (KubeVirt's virt-handler reaches pods' volumes at the fixed /var/lib/kubelet).
 */
export function nodePaths(workdir: string, kubeletRoot = join(workdir, 'kubelet')) {
  return {
    state: join(workdir, 'state.json'),
    logs: join(workdir, 'logs'),
    images: join(workdir, 'images'),
    buildah: join(workdir, 'buildah'),
    containerdRoot: join(workdir, 'containerd', 'root'),
    containerdState: join(workdir, 'containerd', 'state'),
    containerdConfig: join(workdir, 'containerd', 'config.toml'),
    containerdSocket: join(workdir, 'containerd', 'containerd.sock'),
    cniConfDir: join(workdir, 'cni', 'net.d'),
    cniIpamDir: join(workdir, 'cni', 'ipam'),
    kubeletRoot,
    kubeletConfig: join(workdir, 'kubelet-config.yaml'),
    podLogs: join(workdir, 'pod-logs'),
    kubeProxyConfig: join(workdir, 'kube-proxy-config.yaml'),
    corefile: join(workdir, 'Corefile'),
    localPathConfig: join(workdir, 'local-path-config.json'),
    localPathHelperPod: join(workdir, 'local-path-helper-pod.yaml'),
    localPathStorage: join(workdir, 'local-path'),
    kwokctlConfig: join(workdir, 'kwokctl.yaml'),
    /** The control-plane host's network namespace, pinned by a bind mount (unmounting frees it). */
    controlPlaneNetns: join(workdir, 'agentry-cp.netns'),
    /** Unix sockets joining the control-plane host's listeners to the loopback services. */
    forwardSockets: join(workdir, 'forward'),
  };
}
export type NodePaths = ReturnType<typeof nodePaths>;

/** The machine as the harness found it: what teardown restores or must not remove. */
export const BaselineSchema = z.object({
  sysctls: z.record(z.string(), z.string()),
  /** `table chain` pairs per family (iptables-save -S style), present before the node. */
  iptablesChains: z.object({ ipv4: z.array(z.string()), ipv6: z.array(z.string()) }),
  nftTables: z.array(z.string()),
  ipsets: z.array(z.string()),
  /** Host paths the kubelet or containerd create outside the workdir, and whether each existed. */
  hostPaths: z.record(z.string(), z.array(z.string()).nullable()),
  uplink: z.string(),
});
export type Baseline = z.infer<typeof BaselineSchema>;

/** What a running real node left on disk, so that teardown (or the next run) can undo it. */
export const RealNodeStateSchema = z.object({
  ownerPid: z.number().int(),
  workdir: z.string(),
  baseline: BaselineSchema,
  /** Daemons by name; stopped in reverse order of start. */
  pids: z.array(z.object({ name: z.string(), pid: z.number().int() })),
  /** The KWOK cluster the node joined (its own state, destroyed with the node). */
  cluster: ClusterStateSchema.optional(),
  kubeProxy: z.string().optional(),
  kubeRouter: z.string().optional(),
  /** The kubelet's root when it is not under the workdir (StartRealNodeOptions.kubeletRoot). */
  kubeletRoot: z.string().optional(),
  /** The root mount was private and was made shared (StartRealNodeOptions.sharedRootMount). */
  rootMadeShared: z.boolean().optional(),
});
export type RealNodeState = z.infer<typeof RealNodeStateSchema>;
