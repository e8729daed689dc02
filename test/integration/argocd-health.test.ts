// Our Argo CD health checks (deploy/argocd/health/*.lua), run by a real Lua 5.1 on sample objects of
// every kind in every state Argo CD must tell apart (test/integration/argocd-health-samples.ts).
import { describe, expect, it } from '@jest/globals';
import { argoHealth, toLuaLiteral } from '../support/argocd-health.js';
import type { ArgoHealth } from '../support/argocd-health.js';
import {
  agentComputerSamples,
  contextLakeSamples,
  organizationSamples,
  taskSamples,
  webhookSamples,
  workspacePoolSamples,
} from './argocd-health-samples.js';

type Expected = [sample: string, status: ArgoHealth['status'], message: RegExp];

const STALE = /waiting for the operator to observe generation 3/;
const UNSEEN = /^waiting for the operator$/;

function checks(kind: string, samples: Record<string, unknown>, expected: Expected[]): void {
  it('has an expectation for every sample', () => {
    expect(expected.map(([sample]) => sample).sort()).toEqual(Object.keys(samples).sort());
  });
  it.each(expected)('%s: %s', async (sample, status, message) => {
    const health = await argoHealth(kind, samples[sample]);
    expect(health.status).toBe(status);
    expect(health.message).toMatch(message);
  });
}

describe('Argo CD health of an Organization', () => {
  checks('Organization', organizationSamples, [
    ['namespace made or adopted', 'Healthy', /resources live in agentry-org-acme/],
    ['namespace held by another organization', 'Degraded', /belongs to organization globex/],
    ['not seen by the operator yet', 'Progressing', UNSEEN],
    ['status of an older generation', 'Progressing', STALE],
  ]);
});

describe('Argo CD health of an AgentComputer', () => {
  checks('AgentComputer', agentComputerSamples, [
    ['runner answers', 'Healthy', /the runner answers/],
    ['pod starting', 'Progressing', /is starting/],
    ['hibernated', 'Suspended', /^hibernated \(Requested\): stopped; the disk is kept$/],
    ['hibernating, pod still stopping', 'Progressing', /terminating/],
    ['image cannot be pulled', 'Degraded', /ErrImagePull/],
    ['runtime not enabled', 'Degraded', /runtime kubevirt is not enabled/],
    ['not seen by the operator yet', 'Progressing', UNSEEN],
    ['status of an older generation', 'Progressing', STALE],
  ]);
});

describe('Argo CD health of a Task', () => {
  checks('Task', taskSamples, [
    ['a prompt running', 'Progressing', /pending or running/],
    ['a prompt pending', 'Progressing', /pending or running/],
    ['completed', 'Healthy', /^completed$/],
    ['canceled', 'Healthy', /^canceled$/],
    ['latest prompt failed', 'Degraded', /^the latest prompt failed: the executor exited with status 2$/],
    ['completed, archiving failed', 'Degraded', /the bucket does not exist/],
    ['not seen by the operator yet', 'Progressing', UNSEEN],
    ['status of an older generation', 'Progressing', STALE],
  ]);
});

describe('Argo CD health of a ContextLake', () => {
  checks('ContextLake', contextLakeSamples, [
    ['serving this generation', 'Healthy', /generation 2 applied: 1 of 1 datasets ready/],
    ['never started (hibernated)', 'Suspended', /never been started/],
    ['paused', 'Suspended', /paused/],
    ['lake server starting', 'Progressing', /starting/],
    ['loading this generation', 'Progressing', /loading generation 2/],
    ['workload failed', 'Degraded', /cannot be scheduled/],
    ['configuration invalid', 'Degraded', /missing from context-lake-credentials/],
    ['a dataset failed', 'Degraded', /^dataset orders: no such bucket$/],
    ['notification queue failed', 'Degraded', /access denied/],
    ['not seen by the operator yet', 'Progressing', UNSEEN],
    ['status of an older generation', 'Progressing', STALE],
  ]);
});

describe('Argo CD health of a Webhook', () => {
  checks('Webhook', webhookSamples, [
    ['no delivery yet', 'Healthy', /no delivery yet/],
    ['delivered', 'Healthy', /last delivery at 2026-11-25T11:00:00.000Z/],
    [
      'deliveries failing',
      'Degraded',
      /^3 failed delivery attempt\(s\) since the last success: connect ECONNREFUSED$/,
    ],
    ['target answered 410 Gone', 'Degraded', /410 Gone/],
  ]);
});

describe('Argo CD health of a WorkspacePool', () => {
  checks('WorkspacePool', workspacePoolSamples, [
    ['filled', 'Healthy', /^2\/2 ready: 2 workspaces ready to claim/],
    ['refilling', 'Progressing', /^1\/2 ready: 1 workspace starting/],
    ['members cannot start', 'Degraded', /ErrImagePull/],
    ['maxReady below minReady', 'Degraded', /maxReady 1 is below/],
    ['not seen by the operator yet', 'Progressing', UNSEEN],
    ['status of an older generation', 'Progressing', STALE],
  ]);
});

describe('the object handed to Lua', () => {
  it('keeps strings byte for byte, quotes and escapes included', async () => {
    const text = 'a "quoted" back\\slash,\n1 new line before a digit, tab\t and ünïcode ✓';
    const health = await argoHealth('Webhook', { status: { failureCount: 1, lastError: text } });
    expect(health.message).toBe(`1 failed delivery attempt(s) since the last success: ${text}`);
  });

  it('renders arrays as sequences and objects as keyed tables', () => {
    expect(toLuaLiteral({ a: [1, true], 'b-c': 'x' })).toBe('{["a"]={1,true},["b-c"]="x"}');
  });
});
