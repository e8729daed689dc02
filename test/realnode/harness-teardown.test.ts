// The real-node harness itself: stopping a node, or reaping one whose owner was killed with
// kill -9, leaves no bridge, veth, iptables rule, mount, sysctl change or process behind.
// Runs in the realnode-harness project (no global node: one real node per machine).
import { beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { kubectl } from '../cluster/harness/cluster.js';
import type { ClusterState } from '../cluster/harness/cluster.js';
import { REAL_NODE_ENV } from './harness/env.js';
import { leftovers, veths } from './harness/leftovers.js';
import { RealNodeStateSchema, nodePaths } from './harness/layout.js';
import { mountsUnder } from './harness/cleanup.js';
import { podVeths } from './harness/network.js';
import { reapStaleRealNodes, startRealNode } from './harness/node.js';
import { busyboxPod } from './support.js';

/** A pod on the node, so that there are veths, a netns, mounts and container processes to undo. */
async function runOnePod(cluster: ClusterState): Promise<void> {
  await kubectl(cluster, ['apply', '-f', '-'], busyboxPod('probe', 'default', 'exec sleep 3600'));
  await kubectl(cluster, ['wait', '--for=condition=Ready', '--timeout=120s', '-n', 'default', 'pod/probe']);
}

const ReadySchema = z.object({ workdir: z.string() });

/** Starts a node in a child process (start-node.ts); resolves with the child and the node's workdir. */
async function startNodeInChild(): Promise<{ kill: () => Promise<void>; workdir: string }> {
  const child = spawn(
    process.execPath,
    ['--import', './test/support/register-swc.mjs', 'test/realnode/harness/start-node.ts'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout });
  for await (const line of lines) {
    if (line.startsWith('READY ')) {
      // Resolves once the child is reaped: a zombie would still count as a live owner.
      const kill = (): Promise<void> =>
        new Promise((resolve) => {
          child.once('exit', () => {
            resolve();
          });
          child.kill('SIGKILL');
        });
      return { kill, workdir: ReadySchema.parse(JSON.parse(line.slice(6))).workdir };
    }
  }
  throw new Error('start-node.ts exited before its node was ready');
}

/** One real node per machine: the realnode project's global node would hold the lock until the end. */
function requireNoGlobalNode(): void {
  if (process.env[REAL_NODE_ENV] !== undefined) {
    throw new Error(
      'the realnode project started a real node in this jest run; run the harness teardown tests in a jest run of their own: npm run test:realnode-harness',
    );
  }
}

describe('real node harness teardown', () => {
  beforeAll(requireNoGlobalNode);

  it('leaves no bridge, veth, iptables rule, mount or process behind when a real node stops', async () => {
    const vethsBefore = await veths();
    const node = await startRealNode();
    await runOnePod(node.cluster);
    expect((await podVeths()).length).toBeGreaterThan(0);
    expect((await mountsUnder([node.workdir])).length).toBeGreaterThan(0);
    await node.stop();
    expect(
      await leftovers(
        node.baseline,
        node.workdir,
        vethsBefore,
        node.pids.map(({ pid }) => pid),
      ),
    ).toEqual([]);
  }, 900_000);

  it('reaps a real node whose owner was killed with kill -9', async () => {
    const vethsBefore = await veths();
    const child = await startNodeInChild();
    const state = RealNodeStateSchema.parse(
      JSON.parse(await readFile(nodePaths(child.workdir).state, 'utf8')),
    );
    if (state.cluster === undefined) throw new Error('the child wrote no cluster to its state');
    await runOnePod(state.cluster);
    await child.kill();
    expect(await reapStaleRealNodes()).toContain(child.workdir);
    expect(
      await leftovers(
        state.baseline,
        state.workdir,
        vethsBefore,
        state.pids.map(({ pid }) => pid),
      ),
    ).toEqual([]);
  }, 900_000);
});
