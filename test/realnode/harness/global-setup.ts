// Jest global setup of the realnode project: a harness cluster with one real node (see node.ts).
import { REAL_NODE_ENV, toEnvState } from './env.js';
import { startRealNode } from './node.js';
import { destroyRealNode } from './teardown.js';

/**
 * Image archives for the node's containerd, colon-separated: where images/build.sh's docker-archive
 * tars of our images come in. With them imported, installAgentry(toEnvState(node), images) from
 * ./install-agentry.js installs the release; merge its result into the environment state below so
 * that deployment() in ../support.ts finds it (the *-on-the-real-node tests need it).
 */
const IMAGE_ARCHIVES_ENV = 'AGENTRY_REALNODE_IMAGE_ARCHIVES';

export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  const imageArchives = (process.env[IMAGE_ARCHIVES_ENV] ?? '').split(':').filter((path) => path !== '');
  const node = await startRealNode({ imageArchives });
  // Workers start after global setup and inherit the environment: this is how tests find the node.
  process.env[REAL_NODE_ENV] = JSON.stringify(toEnvState(node));
  process.stderr.write(
    `\nreal node ready in ${((Date.now() - started) / 1000).toFixed(1)} s (kubelet to Ready ${(node.nodeReadyMs / 1000).toFixed(1)} s)\n`,
  );
  // Jest runs no teardown on an interrupt: tear down here, and reap after a kill -9 on the next start.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      void destroyRealNode(node).finally(() => process.exit(130));
    });
  }
}
