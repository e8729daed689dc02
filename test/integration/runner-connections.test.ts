// The operator's connections to ready runners (operator/agent-computer/runner-connections.ts): opened
// when it sees a workspace ready, kept open while the workspace is an available warm-pool member (by
// a timer of its own, retried sooner after a failure), so a claimed member's first prompt goes over
// an open connection as a running workspace's does.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import {
  AgentComputerSpecSchema,
  AgentComputerType,
  POOL_LABEL,
  POOL_MEMBER_STATE_LABEL,
  PoolMemberStates,
  apiVersionOf,
} from '../../crds/index.js';
import type { AgentComputer, PoolMemberState } from '../../crds/index.js';
import { createServer } from 'node:http';
import { RunnerConnections } from '../../operator/agent-computer/runner-connections.js';
import { createLogger } from '../../platform/log.js';
import { RunnerClient } from '../../platform/runner-client.js';
import { RUNNER_KEEP_ALIVE_MS } from '../../platform/runner-protocol.js';
import { readyStatus } from '../support/ready-status.js';
import { until } from '../support/until.js';
import { shellInvocation } from './api/tasks-sse.js';
import { TOKEN, startRunner, stopStartedRunners } from './runner-tasks-support.js';
import type { TestRunner } from './runner-tasks-support.js';

afterAll(stopStartedRunners);

/** A runner on loopback, counting the connections and requests it accepted. */
async function countingRunner(): Promise<TestRunner & { connections: () => number; requests: () => number }> {
  const runner = await startRunner();
  let connections = 0;
  let requests = 0;
  runner.http.server.on('connection', () => connections++);
  runner.http.server.on('request', () => requests++);
  return { ...runner, connections: () => connections, requests: () => requests };
}

/** A workspace Ready with the runner's endpoint, as the operator writes it; `pool` makes it a member. */
function workspace(
  endpoint: string,
  pool?: PoolMemberState,
  mode: 'Running' | 'Hibernated' = 'Running',
): AgentComputer {
  const ac: AgentComputer = {
    apiVersion: apiVersionOf(AgentComputerType),
    kind: AgentComputerType.kind,
    metadata: {
      name: 'ws',
      namespace: 'agentry-org-acme',
      generation: 1,
      ...(pool === undefined ? {} : { labels: { [POOL_LABEL]: 'default', [POOL_MEMBER_STATE_LABEL]: pool } }),
    },
    spec: AgentComputerSpecSchema.parse({ operatingMode: mode }),
  };
  return { ...ac, status: readyStatus(ac, endpoint) };
}

/**
 * A pause between two requests, as there is between a member's readiness and its claim: fetch puts a
 * connection back in its pool a moment after the answer was read, and a request sent at once would
 * open another.
 */
const claimComesLater = (): Promise<void> => sleep(50);

/** Long enough for a keeper with the test's intervals to have asked again had it meant to. */
const quietFor = (ms: number): Promise<void> => sleep(ms);

const opened: RunnerConnections[] = [];

/** The keeper under test: the given keep-open interval, and retries from 20 ms. */
function connectionsOf(keepOpenIntervalMs = 60_000): RunnerConnections {
  const connections = new RunnerConnections({
    logger: createLogger({ level: 'silent' }),
    tokenOf: () => TOKEN,
    keepOpenIntervalMs,
    firstRetryMs: 20,
  });
  opened.push(connections);
  return connections;
}

afterEach(() => {
  for (const connections of opened.splice(0)) connections.close();
});

const afterAllClose: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of afterAllClose.splice(0)) await close();
});

/**
 * A stand-in for a runner whose Service is not reachable yet (the node has not programmed its rules):
 * its health check fails `failures` times, then answers. Only the keeper's retries are tested with it.
 */
async function runnerReachableAfter(failures: number): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    res.writeHead(requests <= failures ? 503 : 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok: requests > failures }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  afterAllClose.push(
    () =>
      new Promise<void>((resolve) =>
        server.close(() => {
          resolve();
        }),
      ),
  );
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the stand-in has no port');
  return { url: `http://127.0.0.1:${address.port}`, requests: () => requests };
}

describe('a runner', () => {
  it('announces that it keeps an idle connection open for RUNNER_KEEP_ALIVE_MS', async () => {
    const runner = await startRunner();
    const res = await fetch(`${runner.http.url}/healthz`, { headers: { authorization: `Bearer ${TOKEN}` } });
    await res.text();
    expect(res.headers.get('keep-alive')).toBe(`timeout=${RUNNER_KEEP_ALIVE_MS / 1000}`);
  });
});

describe("the operator's connections to runners", () => {
  it("sends a claimed member's first prompt over the connection it opened when the member was ready", async () => {
    const runner = await countingRunner();
    const connections = connectionsOf();
    connections.keep(workspace(runner.http.url, PoolMemberStates.Available), true);
    await connections.settled();
    await claimComesLater();
    const client = new RunnerClient({ endpoint: runner.http.url, token: TOKEN });
    await client.dispatchPrompt('task-1', randomUUID(), {
      text: 'true',
      executor: shellInvocation(),
    });
    expect(runner.requests()).toBe(2);
    expect(runner.connections()).toBe(1);
  });

  it('asks an available member again every keep-open interval by itself, over the one connection', async () => {
    const runner = await countingRunner();
    const connections = connectionsOf(150);
    connections.keep(workspace(runner.http.url, PoolMemberStates.Available), false);
    await until('two more health checks', () => Promise.resolve(runner.requests() >= 3 ? true : undefined));
    expect(runner.connections()).toBe(1);
  });

  it('does not ask again when the reconciler passes over an available member it keeps', async () => {
    const runner = await countingRunner();
    const connections = connectionsOf();
    const member = workspace(runner.http.url, PoolMemberStates.Available);
    connections.keep(member, true);
    connections.keep(member, false);
    connections.keep(member, false);
    await connections.settled();
    await quietFor(200);
    expect(runner.requests()).toBe(1);
  });

  it('asks a member whose runner cannot be reached yet again soon, until it answers, then only every interval', async () => {
    const runner = await runnerReachableAfter(3);
    const connections = connectionsOf();
    connections.keep(workspace(runner.url, PoolMemberStates.Available), true);
    await until('the health check that is answered', () =>
      Promise.resolve(runner.requests() >= 4 ? true : undefined),
    );
    await quietFor(300);
    expect(runner.requests()).toBe(4);
  });

  it('opens the connection to a workspace outside any pool when it becomes ready, and keeps asking nothing', async () => {
    const runner = await countingRunner();
    const connections = connectionsOf(100);
    connections.keep(workspace(runner.http.url), true);
    await connections.settled();
    expect(runner.requests()).toBe(1);
    connections.keep(workspace(runner.http.url), false);
    await quietFor(300);
    expect(runner.requests()).toBe(1);
  });

  it('asks nothing of a workspace outside any pool that was ready before (an operator restart)', async () => {
    const runner = await countingRunner();
    const connections = connectionsOf();
    connections.keep(workspace(runner.http.url), false);
    await connections.settled();
    expect(runner.requests()).toBe(0);
  });

  it('stops keeping a member open once it is claimed', async () => {
    const runner = await countingRunner();
    const connections = connectionsOf(100);
    connections.keep(workspace(runner.http.url, PoolMemberStates.Available), true);
    await connections.settled();
    expect(runner.requests()).toBe(1);
    connections.keep(workspace(runner.http.url, PoolMemberStates.Claimed), false);
    await quietFor(300);
    expect(runner.requests()).toBe(1);
  });

  it('stops asking every member when it is closed (the operator stops)', async () => {
    const runner = await countingRunner();
    const connections = connectionsOf(100);
    connections.keep(workspace(runner.http.url, PoolMemberStates.Available), true);
    await connections.settled();
    connections.close();
    await quietFor(300);
    expect(runner.requests()).toBe(1);
  });

  it('opens nothing to a workspace asked to hibernate', async () => {
    const runner = await countingRunner();
    const hibernating = workspace(runner.http.url, PoolMemberStates.Available, 'Hibernated');
    const connections = connectionsOf();
    connections.keep(hibernating, true);
    await connections.settled();
    expect(runner.requests()).toBe(0);
  });
});
