// Isolation proven on the wire, with kube-router enforcing NetworkPolicy on the real node. A prompt
// in a workspace of one organization (the way an agent, or a prompt-injected repository, would try)
// opens TCP connections to another organization's runner and lake, the API server, the operator's
// metrics port and the kube-apiserver: every one must fail but the API server's port, which serves
// the model gateway (ADR 9; each call authenticated by the prompt's token). Control probes from Pods that no
// workspace policy covers show each target really listens, so a missing policy fails the test.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { readTaskStream } from '../support/sse.js';
import {
  api,
  createTask,
  createWorkspace,
  deployment,
  eventually,
  kubectl,
  pods,
  startProbePod,
  streamTask,
  streamText,
  waitForWorkspace,
} from './support.js';

const INTRUDER_ORG = 'intruder';
/** A probe Pod outside any organization: no workspace policy selects it. */
const OUTSIDER = 'isolation-outsider';
/** A probe Pod in the control namespace that carries the API server's label, as the policy admits. */
const CONTROL_LOOKALIKE = 'isolation-control-lookalike';

interface Target {
  name: string;
  host: string;
  port: number;
}

let intruderKey = '';
let victimWorkspace = '';
let intruderWorkspace = '';
const targets: Target[] = [];

const PodSchema = z.object({
  status: z.object({ podIP: z.string() }),
  spec: z.object({
    containers: z.array(z.object({ ports: z.array(z.object({ containerPort: z.number() })).optional() })),
  }),
});

async function podAddress(namespace: string, name: string): Promise<{ ip: string; port: number }> {
  const pod = PodSchema.parse(JSON.parse(await kubectl(['get', 'pod', name, '-n', namespace, '-o', 'json'])));
  return { ip: pod.status.podIP, port: pod.spec.containers[0]?.ports?.[0]?.containerPort ?? 0 };
}

async function firstPod(namespace: string, selector: string): Promise<string> {
  return eventually(`a running pod ${selector} in ${namespace}`, async () => {
    const running = (await pods(namespace, selector)).find((pod) => pod.status?.phase === 'Running');
    return running?.metadata.name;
  });
}

/** One line per target, `name open|closed`, from bash's /dev/tcp with a 5 s limit. */
const probeScript = (list: Target[]): string =>
  list
    .map(
      (t) =>
        `if timeout 5 bash -c 'exec 3<>/dev/tcp/${t.host}/${t.port}' 2>/dev/null; then echo "probe ${t.name} open"; else echo "probe ${t.name} closed"; fi`,
    )
    .join('\n');

const outcomes = (text: string): Record<string, string> =>
  Object.fromEntries([...text.matchAll(/probe (\S+) (open|closed)/g)].map((m) => [m[1] ?? '', m[2] ?? '']));

async function probeFromPod(
  name: string,
  namespace: string,
  list: Target[],
): Promise<Record<string, string>> {
  return outcomes(await kubectl(['exec', '-n', namespace, name, '--', 'bash', '-c', probeScript(list)]));
}

beforeAll(async () => {
  const d = deployment();
  // A second organization, and its first key from inside an API pod.
  await kubectl(
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'agentry.dev/v1alpha1',
      kind: 'Organization',
      metadata: { name: INTRUDER_ORG },
      spec: { displayName: 'Intruder', plan: 'pro' },
    }),
  );
  intruderKey = (
    await eventually('a key for the second organization', async () =>
      (
        await kubectl([
          '-n',
          d.namespace,
          'exec',
          `deploy/${d.release}-api`,
          '--',
          'agentry',
          'keys',
          'create',
          '--org',
          INTRUDER_ORG,
          '--user',
          'mallory',
        ])
      ).trim(),
    )
  ).trim();

  victimWorkspace = await createWorkspace('victim');
  const started = await api('/v1/context-lake/start', { method: 'POST' });
  expect(started.status).toBe(202);
  const res = await api('/v1/agent-computers', {
    method: 'POST',
    key: intruderKey,
    body: { name: 'intruder' },
  });
  intruderWorkspace = z.looseObject({ id: z.string() }).parse(res.body).id;
  await waitForWorkspace(victimWorkspace, 'ready');

  const victimRunner = await podAddress(
    d.orgNamespace,
    await firstPod(d.orgNamespace, `agentry.dev/agent-computer=${victimWorkspace}`),
  );
  const victimLake = await podAddress(
    d.orgNamespace,
    await firstPod(d.orgNamespace, 'agentry.dev/context-lake'),
  );
  const apiPod = await podAddress(
    d.namespace,
    await firstPod(d.namespace, 'app.kubernetes.io/name=agentry-api'),
  );
  const operatorPod = await firstPod(d.namespace, 'app.kubernetes.io/name=agentry-operator');
  const operatorIp = (await podAddress(d.namespace, operatorPod)).ip;
  const runnerService = (
    await kubectl([
      'get',
      'service',
      '-n',
      d.orgNamespace,
      '-l',
      `agentry.dev/agent-computer=${victimWorkspace}`,
      '-o',
      'jsonpath={.items[0].spec.clusterIP}',
    ])
  ).trim();
  const kubernetesService = (
    await kubectl(['get', 'service', 'kubernetes', '-n', 'default', '-o', 'jsonpath={.spec.clusterIP}'])
  ).trim();
  // The `kubernetes` Service's endpoint: the apiserver's advertise address (the control-plane host).
  const [apiserverIp = '', apiserverPort = ''] = (
    await kubectl([
      'get',
      'endpoints',
      'kubernetes',
      '-n',
      'default',
      '-o',
      'jsonpath={.subsets[0].addresses[0].ip} {.subsets[0].ports[0].port}',
    ])
  )
    .trim()
    .split(' ');
  targets.push(
    { name: 'other-runner-pod', host: victimRunner.ip, port: victimRunner.port },
    { name: 'other-runner-service', host: runnerService, port: victimRunner.port },
    { name: 'other-lake-pod', host: victimLake.ip, port: victimLake.port },
    { name: 'api-server', host: apiPod.ip, port: apiPod.port },
    { name: 'operator-metrics', host: operatorIp, port: 8081 },
    { name: 'kube-apiserver-service', host: kubernetesService, port: 443 },
    { name: 'kube-apiserver-endpoint', host: apiserverIp, port: Number(apiserverPort) },
  );
  await startProbePod(OUTSIDER, 'default', { app: 'isolation-probe' });
  await startProbePod(CONTROL_LOOKALIKE, d.namespace, { 'app.kubernetes.io/name': 'agentry-api' });
}, 600_000);

afterAll(async () => {
  const d = deployment();
  await kubectl(['delete', 'pod', OUTSIDER, '-n', 'default', '--ignore-not-found', '--wait=false']).catch(
    () => undefined,
  );
  await kubectl([
    'delete',
    'pod',
    CONTROL_LOOKALIKE,
    '-n',
    d.namespace,
    '--ignore-not-found',
    '--wait=false',
  ]).catch(() => undefined);
  if (intruderWorkspace !== '')
    await api(`/v1/agent-computers/${intruderWorkspace}`, { method: 'DELETE', key: intruderKey }).catch(
      () => undefined,
    );
  if (victimWorkspace !== '')
    await api(`/v1/agent-computers/${victimWorkspace}`, { method: 'DELETE' }).catch(() => undefined);
  await api('/v1/context-lake/stop', { method: 'POST' }).catch(() => undefined);
}, 120_000);

describe('isolation on the wire, NetworkPolicy enforced by kube-router', () => {
  it("a workspace's prompt cannot connect to another organization's runner or lake, the control plane or the kube-apiserver", async () => {
    const res = await api('/v1/tasks', {
      method: 'POST',
      key: intruderKey,
      body: { executor: 'shell', workspaceId: intruderWorkspace, prompt: probeScript(targets) },
    });
    expect(res.status).toBe(201);
    const taskId = z.looseObject({ id: z.string() }).parse(res.body).id;
    const d = deployment();
    const stream = await readTaskStream(`${d.apiUrl}/v1/tasks/${taskId}/events`, {
      key: intruderKey,
      timeoutMs: 240_000,
    });
    const text = streamText(stream);
    // The whole stream in the failure message: a prompt that did not run shows why.
    // The API server's port is the one exception, by design: it serves the model gateway
    // (docs/adr/0009-secretless-workspaces.md), which every call still authenticates.
    expect({ done: stream.done?.status, seen: outcomes(text) }).toEqual({
      done: 'completed',
      seen: Object.fromEntries(targets.map((t) => [t.name, t.name === 'api-server' ? 'open' : 'closed'])),
    });
    expect(text.match(/probe \S+ open/g)).toEqual(['probe api-server open']);
  }, 300_000);

  it('the same targets not fenced by their own ingress policy answer a Pod that no workspace policy covers', async () => {
    const seen = await probeFromPod(OUTSIDER, 'default', targets);
    expect(seen).toMatchObject({
      'api-server': 'open',
      'operator-metrics': 'open',
      'kube-apiserver-service': 'open',
      'kube-apiserver-endpoint': 'open',
      // Runners and lakes admit only the control plane, whatever the caller's own policy.
      'other-runner-pod': 'closed',
      'other-runner-service': 'closed',
      'other-lake-pod': 'closed',
    });
  }, 300_000);

  it('runners and lakes admit a Pod of the control namespace carrying the API server label', async () => {
    const d = deployment();
    const seen = await probeFromPod(
      CONTROL_LOOKALIKE,
      d.namespace,
      targets.filter((t) => t.name.startsWith('other-')),
    );
    expect(seen).toEqual({
      'other-runner-pod': 'open',
      'other-runner-service': 'open',
      'other-lake-pod': 'open',
    });
  }, 300_000);

  it('the API server reaches the runner: a prompt in the victim workspace streams through it', async () => {
    const task = await createTask({ workspaceId: victimWorkspace, prompt: 'echo reachable' });
    expect(streamText(await streamTask(task.id))).toContain('reachable');
  }, 300_000);
});
