// Warm-pool claims on the real kube-apiserver: two API replicas, each with a Kubernetes store of
// its own, race for the same members; the API server's resourceVersion check lets one claim win
// each member (docs/adr/0008-warm-pools.md). CRD validation accepts the claim's write.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { AgentComputerType, POOL_MEMBER_STATE_LABEL, WorkspacePoolType } from '../../crds/index.js';
import { CONTROL_NAMESPACE, eventually, startTestApi } from '../support/api-server.js';
import type { TestApi } from '../support/api-server.js';
import { raceReplicasForMembers } from '../support/pool-race.js';
import { clusterStore } from './support.js';

const org = `pool-${randomBytes(3).toString('hex')}`;
const namespace = `agentry-org-${org}`;
let one: TestApi;
let two: TestApi;
let key: string;

beforeAll(async () => {
  one = await startTestApi({ store: clusterStore(), createNamespaces: true });
  two = await startTestApi({ store: clusterStore(), createNamespaces: true });
  key = await one.key({ org, user: 'ada' });
  const keys = (app: TestApi): number => app.readModel.apiKeys.list(CONTROL_NAMESPACE).length;
  await eventually(() => keys(two) >= keys(one), 30_000);
}, 60_000);
afterAll(async () => {
  await two.stop();
  await one.stop();
});

it('never gives one member to two tasks when two replicas claim at once, and writes a valid claim', async () => {
  const workspaces = await raceReplicasForMembers([one, two], { key, namespace, members: 3, tasks: 8 });
  const claimed = await Promise.all(
    workspaces
      .filter((id) => id.startsWith('member-'))
      .map((id) => one.store.get(AgentComputerType, namespace, id)),
  );
  for (const member of claimed) {
    expect(member?.metadata.labels?.[POOL_MEMBER_STATE_LABEL]).toBe('claimed');
    expect(member?.metadata.ownerReferences ?? []).not.toContainEqual(
      expect.objectContaining({ kind: WorkspacePoolType.kind }),
    );
  }
}, 60_000);
