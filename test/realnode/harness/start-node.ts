// Starts a real node and keeps it until this process is told to stop (SIGINT/SIGTERM) or killed.
// The harness teardown test kills it with SIGKILL to leave a node whose owner died; by hand:
//   node --import ./test/support/register-swc.mjs test/realnode/harness/start-node.ts
import { startRealNode } from './node.js';

const node = await startRealNode();
process.stdout.write(`READY ${JSON.stringify({ workdir: node.workdir, nodeReadyMs: node.nodeReadyMs })}\n`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void node.stop().finally(() => process.exit(0));
  });
}
setInterval(() => undefined, 60_000);
