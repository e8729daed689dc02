// Two API replicas over one embedded store race for the same warm-pool members: the store's
// optimistic concurrency lets one claim win each member, the loser takes another or starts cold.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { eventually, startTestApi, CONTROL_NAMESPACE } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { raceReplicasForMembers } from '../../support/pool-race.js';

let one: TestApi;
let two: TestApi;
let key: string;

beforeAll(async () => {
  one = await startTestApi();
  two = await startTestApi({ store: one.store });
  key = await one.key({ org: 'acme' });
  const keys = (app: TestApi): number => app.readModel.apiKeys.list(CONTROL_NAMESPACE).length;
  await eventually(() => keys(two) === keys(one));
});
afterAll(async () => {
  await two.stop();
  await one.stop();
});

it('never gives one member to two tasks when two replicas claim at once', async () => {
  const workspaces = await raceReplicasForMembers([one, two], {
    key,
    namespace: 'agentry-org-acme',
    members: 2,
    tasks: 8,
  });
  expect(workspaces).toHaveLength(8);
});
