// Jest global setup of the realnode project: the Debian packages it needs, our images (built or
// reused), a harness cluster with one real node (see node.ts) whose containerd holds them, and
// Agentry installed on it with helm as a platform team would (install-agentry.ts).
import { execFile as execFileCallback } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { HarnessError } from '../../cluster/harness/tools.js';
import { buildAgentryImages } from './agentry-images.js';
import { REAL_NODE_ENV, toEnvState } from './env.js';
import { installAgentry } from './install-agentry.js';
import { startRealNode } from './node.js';
import { destroyRealNode } from './teardown.js';

const execFile = promisify(execFileCallback);
const seconds = (since: number): string => ((Date.now() - since) / 1000).toFixed(1);

async function ensurePackages(): Promise<void> {
  const packages = (await readFile('scripts/test-packages.txt', 'utf8')).split('\n').filter((p) => p !== '');
  try {
    await execFile('bash', ['scripts/ensure-packages.sh', ...packages], { timeout: 600_000 });
  } catch (err) {
    throw new HarnessError('the real-node tests could not install the Debian packages they need', {
      cause: err,
    });
  }
}

export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  await ensurePackages();
  const built = await buildAgentryImages(tmpdir());
  process.stderr.write(`\nimages ready in ${seconds(started)} s\n`);
  const node = await startRealNode({ imageArchives: built.archives });
  // Jest runs no teardown on an interrupt: tear down here, and reap after a kill -9 on the next start.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      void destroyRealNode(node).finally(() => process.exit(130));
    });
  }
  const state = toEnvState(node);
  // Workers start after global setup and inherit the environment: this is how tests find the node.
  process.env[REAL_NODE_ENV] = JSON.stringify(state);
  process.stderr.write(
    `real node ready at ${seconds(started)} s (kubelet to Ready ${(node.nodeReadyMs / 1000).toFixed(1)} s)\n`,
  );
  const installed = await installAgentry(state, built.images).catch(async (err: unknown) => {
    await destroyRealNode(node);
    throw err;
  });
  process.env[REAL_NODE_ENV] = JSON.stringify({ ...state, ...installed });
  process.stderr.write(`Agentry installed at ${seconds(started)} s\n`);
}
