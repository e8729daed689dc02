// Denials are coalesced in memory and written at most once a second per task: counts written
// before a restart of the proxy are kept, and new refusals add to them.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { TaskType } from '../../../crds/index.js';
import { until } from '../../support/until.js';
import { ORG_NAMESPACE, connectThrough, promptOf, startProxyFixture } from './egress-support.js';
import type { ProxyFixture } from './egress-support.js';

let fixture: ProxyFixture;
beforeEach(async () => {
  fixture = await startProxyFixture([]);
});
afterEach(async () => {
  await fixture.stop();
});

const countOf = async (): Promise<number | undefined> =>
  (await fixture.store.get(TaskType, ORG_NAMESPACE, 'restarted'))?.status?.egressDenials?.[0]?.count;

describe('egress denials across a proxy restart', () => {
  it('keeps the counts written before the restart and adds the new ones, in one entry', async () => {
    const { token } = await promptOf(fixture, 'restarted');
    for (let i = 0; i < 3; i++)
      expect((await connectThrough(fixture.port, 'blocked.test:443', token)).status).toBe(403);
    await until('three denials written', async () => ((await countOf()) === 3 ? true : undefined));
    await fixture.restart();
    expect((await connectThrough(fixture.port, 'blocked.test:443', token)).status).toBe(403);
    await until('four denials written', async () => ((await countOf()) === 4 ? true : undefined));
    const task = await fixture.store.get(TaskType, ORG_NAMESPACE, 'restarted');
    expect(task?.status?.egressDenials).toHaveLength(1);
    // The prompt's own status entry, which the proxy does not own, is kept.
    expect(task?.status?.prompts?.[0]?.status).toBe('running');
  });

  it('writes what is pending when stopped, without waiting for the next flush', async () => {
    const { token } = await promptOf(fixture, 'restarted');
    expect((await connectThrough(fixture.port, 'blocked.test:443', token)).status).toBe(403);
    expect((await connectThrough(fixture.port, 'blocked.test:8443', token)).status).toBe(403);
    await fixture.restart();
    const task = await fixture.store.get(TaskType, ORG_NAMESPACE, 'restarted');
    expect(task?.status?.egressDenials?.map((denial) => denial.port).sort()).toEqual([443, 8443]);
  });
});
