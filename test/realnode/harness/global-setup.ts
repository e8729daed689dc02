// Jest global setup of the realnode project: a real node with Agentry installed (deployment.ts).
import { startRealNodeDeployment } from './deployment.js';
import { REAL_NODE_ENV, toEnvState } from './env.js';
import { destroyRealNode } from './teardown.js';

export default async function globalSetup(): Promise<void> {
  const { state } = await startRealNodeDeployment((node) => {
    // Jest runs no teardown on an interrupt: tear down here, and reap after a kill -9 on the next start.
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      process.once(signal, () => {
        void destroyRealNode(node).finally(() => process.exit(130));
      });
    }
    // Teardown finds the node here even when the installation fails.
    process.env[REAL_NODE_ENV] = JSON.stringify(toEnvState(node));
  });
  // Workers start after global setup and inherit the environment: this is how tests find the release.
  process.env[REAL_NODE_ENV] = JSON.stringify(state);
}
