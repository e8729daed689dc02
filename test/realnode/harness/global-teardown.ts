import { REAL_NODE_ENV, realNodeFromEnv } from './env.js';
import { destroyRealNode } from './teardown.js';

export default async function globalTeardown(): Promise<void> {
  const node = realNodeFromEnv(process.env[REAL_NODE_ENV]);
  if (node !== undefined) await destroyRealNode(node);
}
