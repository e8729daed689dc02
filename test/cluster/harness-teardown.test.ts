// The harness itself: every process it starts is stopped, also when its owner died without
// tearing down (kill -9 of a CI run).
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { access } from 'node:fs/promises';
import { clusterPids, isAlive, reapStaleClusters, startCluster } from './harness/cluster.js';

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

async function allDead(pids: number[]): Promise<boolean> {
  for (let attempt = 0; attempt < 50; attempt++) {
    if (pids.every((pid) => !isAlive(pid) || isZombie(pid))) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/** A process that exited but whose parent has not reaped it yet holds no resources. */
function isZombie(pid: number): boolean {
  const out = spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).stdout.trim();
  return out.startsWith('Z');
}

describe('cluster harness teardown', () => {
  it('stops etcd, the control plane, kwok and moto, and removes its directory', async () => {
    const cluster = await startCluster();
    const pids = [...(await clusterPids(cluster)), cluster.motoPid ?? 0];
    expect(pids.length).toBeGreaterThanOrEqual(6);
    expect(pids.every(isAlive)).toBe(true);
    await cluster.stop();
    expect(await allDead(pids)).toBe(true);
    expect(await exists(cluster.workdir)).toBe(false);
  }, 300_000);

  it('reaps a cluster whose owner process died without tearing it down', async () => {
    const dead = spawnSync('true').pid;
    const cluster = await startCluster({ ownerPid: dead });
    const pids = [...(await clusterPids(cluster)), cluster.motoPid ?? 0];
    expect(await reapStaleClusters()).toContain(cluster.name);
    expect(await allDead(pids)).toBe(true);
    expect(await exists(cluster.workdir)).toBe(false);
  }, 300_000);
});
