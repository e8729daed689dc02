// Who may use the egress proxy and where to: the prompt token, the prompt still running, and the
// union of the installation's, the organization's and the workspace's allow lists.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { EventType, TaskType } from '../../../crds/index.js';
import { until } from '../../support/until.js';
import {
  ORG_NAMESPACE,
  WORKSPACE,
  connectThrough,
  getThrough,
  organizationAllowing,
  promptOf,
  startProxyFixture,
  workspaceAllowing,
} from './egress-support.js';
import type { ProxyFixture } from './egress-support.js';

let fixture: ProxyFixture;
let upstream: Server;
let upstreamPort = 0;
let upstreamConnections = 0;

beforeEach(async () => {
  upstreamConnections = 0;
  upstream = createServer((_req, res) => res.end('upstream says hi'));
  upstream.on('connection', () => (upstreamConnections += 1));
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const address = upstream.address();
  upstreamPort = typeof address === 'object' && address !== null ? address.port : 0;
  fixture = await startProxyFixture([{ host: 'allowed.test', ports: [upstreamPort] }]);
});

afterEach(async () => {
  await fixture.stop();
  upstream.closeAllConnections();
  await new Promise<void>((resolve) =>
    upstream.close(() => {
      resolve();
    }),
  );
});

describe('egress proxy access', () => {
  it('answers 407 with a Basic challenge to a CONNECT without a token, and connects nowhere', async () => {
    const answer = await connectThrough(fixture.port, `allowed.test:${upstreamPort}`);
    expect(answer.status).toBe(407);
    expect(answer.headers['proxy-authenticate']).toBe('Basic realm="agentry"');
    expect(upstreamConnections).toBe(0);
  });

  it('answers 407 to a forged token', async () => {
    const { token } = await promptOf(fixture, 'forged');
    const forged = `${token.slice(0, -4)}AAAA`;
    const answer = await getThrough(fixture.port, `http://allowed.test:${upstreamPort}/`, forged);
    expect(answer.status).toBe(407);
    expect(upstreamConnections).toBe(0);
  });

  it('refuses the token of a prompt that has ended (407), though it is genuine and unexpired', async () => {
    const { token } = await promptOf(fixture, 'ended', 'succeeded');
    const answer = await getThrough(fixture.port, `http://allowed.test:${upstreamPort}/`, token);
    expect(answer.status).toBe(407);
    expect(upstreamConnections).toBe(0);
  });

  it('lets a running prompt reach a host on the installation list', async () => {
    const { token } = await promptOf(fixture, 'running');
    const answer = await getThrough(fixture.port, `http://allowed.test:${upstreamPort}/`, token);
    expect(answer).toMatchObject({ status: 200, body: 'upstream says hi' });
  });

  it('refuses a host on no list with 403 naming host, port and reason, records it on the task and as an Event', async () => {
    const { token } = await promptOf(fixture, 'denied');
    const answer = await connectThrough(fixture.port, `elsewhere.test:${upstreamPort}`, token);
    expect(answer.status).toBe(403);
    expect(answer.body).toBe(`agentry egress proxy: elsewhere.test:${upstreamPort} refused (not_allowed)\n`);
    expect(upstreamConnections).toBe(0);
    const denial = await until('the denial on the task', async () => {
      const task = await fixture.store.get(TaskType, ORG_NAMESPACE, 'denied');
      return task?.status?.egressDenials?.[0];
    });
    expect(denial).toMatchObject({
      host: 'elsewhere.test',
      port: upstreamPort,
      reason: 'not_allowed',
      count: 1,
    });
    const events = await fixture.store.list(EventType, { namespace: ORG_NAMESPACE });
    expect(events.items.map((event) => [event.reason, event.message])).toContainEqual([
      'EgressDenied',
      `denied CONNECT elsewhere.test:${upstreamPort} (not_allowed)`,
    ]);
    expect(await fixture.registry.metrics()).toContain(
      'agentry_egress_denied_total{org="acme",reason="not_allowed"} 1',
    );
  });

  it("adds the organization's and the workspace's rules to the installation's, for that workspace only", async () => {
    await organizationAllowing(fixture, [{ host: 'org.test', ports: [upstreamPort] }]);
    await workspaceAllowing(fixture, WORKSPACE, [{ host: '*.ws.test', ports: [upstreamPort] }]);
    await workspaceAllowing(fixture, 'other-ws', []);
    const mine = await promptOf(fixture, 'mine');
    const other = await promptOf(fixture, 'other', 'running', 'other-ws');
    await until('the caches see the rules', async () => {
      const answer = await getThrough(fixture.port, `http://api.ws.test:${upstreamPort}/`, mine.token);
      return answer.status === 200 ? answer : undefined;
    });
    const orgRule = await getThrough(fixture.port, `http://org.test:${upstreamPort}/`, other.token);
    expect(orgRule.status).toBe(200);
    const otherWorkspace = await getThrough(fixture.port, `http://api.ws.test:${upstreamPort}/`, other.token);
    expect(otherWorkspace.status).toBe(403);
    // A wildcard covers subdomains only, never the bare name.
    const bare = await getThrough(fixture.port, `http://ws.test:${upstreamPort}/`, mine.token);
    expect(bare.status).toBe(403);
  });
});
