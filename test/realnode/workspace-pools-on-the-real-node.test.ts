// A warm pool on the real node, through the installed operator: its members are real Pods of our
// runner image, Ready because the runner answers, and go with the pool. Applied with kubectl, as a
// GitOps user would; nothing here is faked.
import { afterAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { deployment, eventually, kubectl, objectNames, pods, runnerPod } from './support.js';

const POOL = 'real-pool';
const MEMBERS = `agentry.dev/workspace-pool=${POOL}`;

const PoolSchema = z.looseObject({
  status: z.looseObject({ ready: z.number().optional(), provisioning: z.number().optional() }).optional(),
});

const poolManifest = (namespace: string): string =>
  JSON.stringify({
    apiVersion: 'agentry.dev/v1alpha1',
    kind: 'WorkspacePool',
    metadata: { name: POOL, namespace },
    spec: { minReady: 1, template: { runtime: 'pod' } },
  });

/** `<ac>` of `agentcomputer.agentry.dev/<ac>`. */
const memberNames = async (namespace: string): Promise<string[]> =>
  (await objectNames('agentcomputers', namespace, MEMBERS)).map((name) => name.split('/').pop() ?? name);

afterAll(async () => {
  const d = deployment();
  await kubectl(['delete', 'workspacepool', POOL, '-n', d.orgNamespace, '--ignore-not-found']).catch(
    () => undefined,
  );
}, 120_000);

describe('a pod-runtime warm pool on the real node', () => {
  it('fills with a member whose runner Pod runs on the real node and answers', async () => {
    const d = deployment();
    await kubectl(['apply', '-f', '-'], poolManifest(d.orgNamespace));
    await eventually(
      'the pool to report one ready member',
      async () => {
        const pool = PoolSchema.parse(
          JSON.parse(await kubectl(['get', 'workspacepool', POOL, '-n', d.orgNamespace, '-o', 'json'])),
        );
        return pool.status?.ready === 1 && pool.status.provisioning === 0 ? true : undefined;
      },
      300_000,
    );
    const [member] = await memberNames(d.orgNamespace);
    expect(member).toMatch(/^real-pool-[a-z0-9]{5}$/);
    const { pod, processes } = await runnerPod(member ?? '');
    expect(pod?.spec.nodeName).toBe(d.nodeName);
    expect(pod?.status?.phase).toBe('Running');
    expect(processes).toMatch(/agentry runner/);
  }, 360_000);

  it("warms its member's runner up before it listens, leaving nothing of it on the disk", async () => {
    const d = deployment();
    const [member] = await memberNames(d.orgNamespace);
    const { pod } = await runnerPod(member ?? '');
    const name = pod?.metadata.name ?? '';
    const warmed = (await kubectl(['logs', '-n', d.orgNamespace, name]))
      .split('\n')
      .filter((line) => line.includes('"msg":"runner warmed up"'))
      .map((line): unknown => JSON.parse(line));
    expect(warmed).toEqual([expect.objectContaining({ status: 'succeeded' })]);
    const onDisk = (dir: string) => kubectl(['exec', '-n', d.orgNamespace, name, '--', 'ls', '-A', dir]);
    expect((await onDisk('/code')).trim()).toBe('');
    // The state directory holds only what every runner writes at start (bin/agentry, the lake
    // client on executors' PATH): no warm-up directory, event log or prompt record.
    expect((await onDisk('/var/lib/agentry-runner')).trim().split('\n')).toEqual(['bin']);
  }, 120_000);

  it('takes its unclaimed members and their Pods with it when deleted', async () => {
    const d = deployment();
    const members = await memberNames(d.orgNamespace);
    expect(members).toHaveLength(1);
    await kubectl(['delete', 'workspacepool', POOL, '-n', d.orgNamespace]);
    await eventually(
      'the members and their pods gone',
      async () => {
        const left = await memberNames(d.orgNamespace);
        const podsLeft = await pods(d.orgNamespace, `agentry.dev/agent-computer=${members[0] ?? ''}`);
        return left.length === 0 && podsLeft.length === 0 ? true : undefined;
      },
      240_000,
    );
  }, 300_000);
});
