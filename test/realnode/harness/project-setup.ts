// What the global setup of a project on the real node does (the realnode project, the kubevirt
// project): start the deployment, make sure an interrupt still tears it down, and hand it to the test
// workers through the environment.
import { startRealNodeDeployment } from './deployment.js';
import type { RealNodeDeployment, RealNodeDeploymentOptions } from './deployment.js';
import { REAL_NODE_ENV, toEnvState } from './env.js';
import { destroyRealNode } from './teardown.js';

/** Starts the deployment; `extra` adds fields to what the workers read (their schema must allow them). */
export async function setUpRealNodeProject(
  options: RealNodeDeploymentOptions = {},
  extra: Record<string, unknown> = {},
): Promise<RealNodeDeployment> {
  const deployment = await startRealNodeDeployment((node) => {
    // Jest runs no teardown on an interrupt: tear down here, and reap after a kill -9 on the next start.
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      process.once(signal, () => {
        void destroyRealNode(node).finally(() => process.exit(130));
      });
    }
    // Teardown finds the node here even when the installation fails.
    process.env[REAL_NODE_ENV] = JSON.stringify(toEnvState(node));
  }, options);
  // Workers start after global setup and inherit the environment: this is how tests find the release.
  process.env[REAL_NODE_ENV] = JSON.stringify({ ...deployment.state, ...extra });
  return deployment;
}
