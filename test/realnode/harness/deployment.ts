// Everything the real-node tests and the real-node bench stand on: the Debian packages, our images
// (built or reused by images/build.sh), a harness cluster with one real node whose containerd holds
// them, and Agentry installed on it with helm as a platform team would.
import { tmpdir } from 'node:os';
import { HarnessError } from '../../cluster/harness/tools.js';
import { ensureTestPackages } from '../../support/test-packages.js';
import { buildAgentryImages } from './agentry-images.js';
import { toEnvState } from './env.js';
import type { RealNodeEnv } from './env.js';
import { installAgentry } from './install-agentry.js';
import type { AgentryDeployment } from './install-agentry.js';
import { startRealNode } from './node.js';
import type { RealNode } from './node.js';
import { destroyRealNode } from './teardown.js';

const seconds = (since: number): string => ((Date.now() - since) / 1000).toFixed(1);

const ensurePackages = (): Promise<void> =>
  ensureTestPackages(
    (cause) =>
      new HarnessError('the real-node tests could not install the Debian packages they need', { cause }),
  );

export interface RealNodeDeployment {
  node: RealNode;
  state: RealNodeEnv & AgentryDeployment;
}

/** What a suite adds to the standard deployment (the KubeVirt suite: KubeVirt, CDI and VM disks). */
export interface RealNodeDeploymentOptions {
  /** More image archives for the node's containerd, beside our three. */
  imageArchives?: string[];
  /** The kubelet's root directory (StartRealNodeOptions.kubeletRoot). */
  kubeletRoot?: string;
  /** StartRealNodeOptions.sharedRootMount. */
  sharedRootMount?: boolean;
  /** StartRealNodeOptions.containerdPidNamespace. */
  containerdPidNamespace?: boolean;
  /** StartRealNodeOptions.fakeKubevirt. */
  fakeKubevirt?: boolean;
  /** Runs once the node is ready, before Agentry is installed; returns helm values files to layer over ours. */
  beforeInstall?: (node: RealNode) => Promise<string[]>;
}

/** Packages, images, node, helm install; progress on stderr. On failure nothing is left running. */
export async function startRealNodeDeployment(
  onNode: (node: RealNode) => void = () => undefined,
  options: RealNodeDeploymentOptions = {},
): Promise<RealNodeDeployment> {
  const started = Date.now();
  await ensurePackages();
  const built = await buildAgentryImages(tmpdir());
  process.stderr.write(`\nimages ready in ${seconds(started)} s\n`);
  const node = await startRealNode({
    imageArchives: [...built.archives, ...(options.imageArchives ?? [])],
    ...(options.kubeletRoot === undefined ? {} : { kubeletRoot: options.kubeletRoot }),
    ...(options.sharedRootMount === undefined ? {} : { sharedRootMount: options.sharedRootMount }),
    ...(options.containerdPidNamespace === undefined
      ? {}
      : { containerdPidNamespace: options.containerdPidNamespace }),
    ...(options.fakeKubevirt === undefined ? {} : { fakeKubevirt: options.fakeKubevirt }),
  });
  onNode(node);
  process.stderr.write(
    `real node ready at ${seconds(started)} s (kubelet to Ready ${(node.nodeReadyMs / 1000).toFixed(1)} s)\n`,
  );
  const state = toEnvState(node);
  try {
    const valuesFiles = (await options.beforeInstall?.(node)) ?? [];
    const installed = await installAgentry(state, built.images, valuesFiles);
    process.stderr.write(`Agentry installed at ${seconds(started)} s\n`);
    return { node, state: { ...state, ...installed } };
  } catch (err) {
    await destroyRealNode(node);
    throw err;
  }
}
