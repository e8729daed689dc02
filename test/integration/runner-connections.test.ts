// The operator's connections to ready runners (operator/agent-computer/runner-connections.ts): opened
// when it sees a workspace ready, kept open while the workspace is an available warm-pool member, so
// a claimed member's first prompt goes over an open connection as a running workspace's does.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeEach, describe, expect, it } from '@jest/globals';
import {
  AgentComputerSpecSchema,
  AgentComputerType,
  POOL_LABEL,
  POOL_MEMBER_STATE_LABEL,
  PoolMemberStates,
  apiVersionOf,
} from '../../crds/index.js';
import type { AgentComputer, PoolMemberState } from '../../crds/index.js';
import {
  KEEP_OPEN_INTERVAL_MS,
  RunnerConnections,
} from '../../operator/agent-computer/runner-connections.js';
import { createLogger } from '../../platform/log.js';
import { RunnerClient } from '../../platform/runner-client.js';
import { RUNNER_KEEP_ALIVE_MS } from '../../platform/runner-protocol.js';
import { readyStatus } from '../support/ready-status.js';
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

let clock = 0;
const connectionsOf = () =>
  new RunnerConnections({
    logger: createLogger({ level: 'silent' }),
    tokenOf: () => TOKEN,
    now: () => clock,
  });

beforeEach(() => {
  clock = 1_000_000;
});

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

  it('asks an available member again after KEEP_OPEN_INTERVAL_MS, and not before', async () => {
    const runner = await countingRunner();
    const connections = connectionsOf();
    const member = workspace(runner.http.url, PoolMemberStates.Available);
    expect(connections.keep(member, false)).toBe(KEEP_OPEN_INTERVAL_MS);
    await connections.settled();
    expect(runner.requests()).toBe(1);
    clock += 1_000;
    expect(connections.keep(member, false)).toBe(KEEP_OPEN_INTERVAL_MS - 1_000);
    clock += KEEP_OPEN_INTERVAL_MS;
    await claimComesLater();
    expect(connections.keep(member, false)).toBe(KEEP_OPEN_INTERVAL_MS);
    await connections.settled();
    expect(runner.requests()).toBe(2);
    expect(runner.connections()).toBe(1);
  });

  it('opens the connection to a workspace outside any pool when it becomes ready, and asks for no later call', async () => {
    const runner = await countingRunner();
    const connections = connectionsOf();
    expect(connections.keep(workspace(runner.http.url), true)).toBeUndefined();
    await connections.settled();
    expect(runner.requests()).toBe(1);
    clock += KEEP_OPEN_INTERVAL_MS;
    expect(connections.keep(workspace(runner.http.url), false)).toBeUndefined();
    await connections.settled();
    expect(runner.requests()).toBe(1);
  });

  it('asks nothing of a workspace outside any pool that was ready before (an operator restart)', async () => {
    const runner = await countingRunner();
    const connections = connectionsOf();
    expect(connections.keep(workspace(runner.http.url), false)).toBeUndefined();
    await connections.settled();
    expect(runner.requests()).toBe(0);
  });

  it('stops keeping a member open once it is claimed', async () => {
    const runner = await countingRunner();
    const connections = connectionsOf();
    connections.keep(workspace(runner.http.url, PoolMemberStates.Available), true);
    await connections.settled();
    expect(runner.requests()).toBe(1);
    clock += KEEP_OPEN_INTERVAL_MS;
    expect(connections.keep(workspace(runner.http.url, PoolMemberStates.Claimed), false)).toBeUndefined();
    await connections.settled();
    expect(runner.requests()).toBe(1);
  });

  it('opens nothing to a workspace asked to hibernate', async () => {
    const runner = await countingRunner();
    const hibernating = workspace(runner.http.url, PoolMemberStates.Available, 'Hibernated');
    const connections = connectionsOf();
    expect(connections.keep(hibernating, true)).toBeUndefined();
    await connections.settled();
    expect(runner.requests()).toBe(0);
  });
});
