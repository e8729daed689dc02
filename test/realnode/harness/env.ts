// How global setup hands the running real node to the test workers (an environment variable).
import { z } from 'zod';
import { ClusterStateSchema } from '../../cluster/harness/cluster.js';
import { RealNodeStateSchema } from './layout.js';
import type { RealNode } from './node.js';

export const REAL_NODE_ENV = 'AGENTRY_TEST_REAL_NODE';

/**
 * What tests get: the node's state plus the facts they address it by. Global setup may add more
 * (the helm release of install-agentry.ts: see RealNodeDeploymentSchema in ../support.ts).
 */
export const RealNodeEnvSchema = RealNodeStateSchema.extend({
  cluster: ClusterStateSchema.extend({ motoUrl: z.string() }),
  kubeconfig: z.string(),
  toolsPath: z.string(),
  nodeName: z.string(),
  nodeIp: z.string(),
  /** The control-plane host's address: the kube-apiserver's endpoint and moto's, as pods reach them. */
  controlPlaneIp: z.string(),
  podCidr: z.string(),
  containerdSocket: z.string(),
  /** moto as the host reaches it (loopback). */
  motoHostUrl: z.string(),
  /** moto as pods reach it (the control-plane host, forwarded to moto on loopback). */
  motoPodUrl: z.string(),
  nodeReadyMs: z.number(),
});
export type RealNodeEnv = z.infer<typeof RealNodeEnvSchema>;

export function toEnvState(node: RealNode): RealNodeEnv {
  return RealNodeEnvSchema.parse({
    ...node,
    kubeconfig: node.cluster.kubeconfig,
    toolsPath: node.cluster.toolsPath,
    nodeName: node.nodeName,
    nodeIp: node.nodeIp,
    controlPlaneIp: node.controlPlaneIp,
    podCidr: node.podCidr,
    containerdSocket: node.paths.containerdSocket,
  });
}

export function realNodeFromEnv(value: string | undefined): RealNodeEnv | undefined {
  if (value === undefined) return undefined;
  return RealNodeEnvSchema.parse(JSON.parse(value));
}
