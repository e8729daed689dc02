// Egress on the wire (docs/egress.md), kube-router enforcing the workspace NetworkPolicy: a
// prompt's direct connection to a server on the pod network fails; the same server through the
// egress proxy answers when its name is allowed, and is refused (403, recorded on the Task and as
// an EgressDenied Event) when it is not. And the provider key of an executor with a model route
// never enters the workspace: not in its environment, any process's, nor /code.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import {
  EGRESS_ALLOWED_HOST,
  EGRESS_DENIED_HOST,
  EGRESS_TARGET_NAMESPACE,
  EGRESS_TARGET_PORT,
  KEY_PROBE_EXECUTOR,
} from './harness/install-agentry.js';
import {
  api,
  busyboxPod,
  createTask,
  deployment,
  eventually,
  kubectl,
  runPod,
  streamTask,
  streamText,
} from './support.js';

const BODY = 'hello-through-the-proxy';
/** Recognisable, and nothing a real provider would accept. */
const FAKE_KEY = 'sk-ant-fake-egress-e2e-4f1d9c';

let serverIp = '';
let workspaceId = '';

const webServer = `mkdir -p /www && echo ${BODY} > /www/index.html && exec httpd -f -p ${EGRESS_TARGET_PORT} -h /www`;

function service(name: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: EGRESS_TARGET_NAMESPACE },
    spec: {
      selector: { app: 'egress-web' },
      ports: [{ port: EGRESS_TARGET_PORT, targetPort: EGRESS_TARGET_PORT }],
    },
  });
}

/** Runs `script` as a shell prompt (in the same workspace after the first) and returns its output. */
async function shellPrompt(script: string, executor = 'shell'): Promise<{ taskId: string; text: string }> {
  const task = await createTask({
    prompt: script,
    executor,
    ...(workspaceId === '' ? {} : { workspaceId }),
  });
  workspaceId = task.workspaceId;
  const stream = await streamTask(task.id, { timeoutMs: 240_000 });
  expect(stream.done?.status).toBe('completed');
  return { taskId: task.id, text: streamText(stream) };
}

const DenialsSchema = z.looseObject({
  status: z
    .looseObject({
      egressDenials: z
        .array(z.object({ host: z.string(), port: z.number(), reason: z.string(), count: z.number() }))
        .optional(),
    })
    .optional(),
});

beforeAll(async () => {
  await kubectl(['create', 'namespace', EGRESS_TARGET_NAMESPACE]);
  serverIp = await runPod(
    busyboxPod('egress-web', EGRESS_TARGET_NAMESPACE, webServer, { labels: { app: 'egress-web' } }),
    'egress-web',
    EGRESS_TARGET_NAMESPACE,
  );
  await kubectl(['apply', '-f', '-'], service('egress-allowed'));
  await kubectl(['apply', '-f', '-'], service('egress-denied'));
}, 240_000);

afterAll(async () => {
  if (workspaceId !== '')
    await api(`/v1/agent-computers/${workspaceId}`, { method: 'DELETE' }).catch(() => undefined);
  await kubectl(['delete', 'namespace', EGRESS_TARGET_NAMESPACE, '--wait=false']).catch(() => undefined);
}, 120_000);

describe('egress of a workspace on the real node', () => {
  it('a direct connection to a server on the pod network fails: the NetworkPolicy admits only the proxy', async () => {
    const { text } = await shellPrompt(
      [
        `if timeout 5 bash -c 'exec 3<>/dev/tcp/${serverIp}/${EGRESS_TARGET_PORT}' 2>/dev/null; then echo "direct open"; else echo "direct closed"; fi`,
        `if curl -sS --noproxy '*' --max-time 5 http://${EGRESS_ALLOWED_HOST}:${EGRESS_TARGET_PORT}/ >/dev/null 2>&1; then echo "named open"; else echo "named closed"; fi`,
      ].join('\n'),
    );
    expect(text).toContain('direct closed');
    expect(text).toContain('named closed');
    // The control: the server really answers (from the host, which no policy covers).
    const res = await fetch(`http://${serverIp}:${EGRESS_TARGET_PORT}/`, {
      signal: AbortSignal.timeout(5_000),
    });
    expect((await res.text()).trim()).toBe(BODY);
  }, 360_000);

  it('the same server answers through the egress proxy when its name is on the allow list', async () => {
    const { text } = await shellPrompt(
      `curl -sS --max-time 20 http://${EGRESS_ALLOWED_HOST}:${EGRESS_TARGET_PORT}/ || echo "curl failed $?"`,
    );
    expect(text).toContain(BODY);
  }, 360_000);

  it('a name not on the list gets 403, recorded in the task status and as an EgressDenied Event', async () => {
    const { taskId, text } = await shellPrompt(
      `curl -sS -o /dev/null -w 'code=%{http_code}\\n' --max-time 20 http://${EGRESS_DENIED_HOST}:${EGRESS_TARGET_PORT}/`,
    );
    expect(text).toContain('code=403');
    const { orgNamespace } = deployment();
    const denial = await eventually('the denial in the task status', async () => {
      const task = DenialsSchema.parse(
        JSON.parse(await kubectl(['get', 'tasks.agentry.dev', taskId, '-n', orgNamespace, '-o', 'json'])),
      );
      return task.status?.egressDenials?.find((entry) => entry.host === EGRESS_DENIED_HOST);
    });
    expect(denial).toMatchObject({ port: EGRESS_TARGET_PORT, reason: 'not_allowed', count: 1 });
    const events = await eventually('an EgressDenied Event', async () => {
      const out = await kubectl([
        'get',
        'events',
        '-n',
        orgNamespace,
        '--field-selector',
        `reason=EgressDenied,involvedObject.name=${taskId}`,
        '-o',
        'jsonpath={.items[*].message}',
      ]);
      return out.includes(EGRESS_DENIED_HOST) ? out : undefined;
    });
    expect(events).toContain(`${EGRESS_DENIED_HOST}:${EGRESS_TARGET_PORT} (not_allowed)`);
  }, 360_000);

  it('the provider key of an executor with a model route is nowhere in the workspace', async () => {
    const { orgNamespace } = deployment();
    await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'agentry-executor-claude', namespace: orgNamespace },
        stringData: { ANTHROPIC_API_KEY: FAKE_KEY },
      }),
    );
    const { text } = await shellPrompt(
      [
        `echo "key variable: \${ANTHROPIC_API_KEY:-absent}" | cut -c1-19`,
        // grep -a: environ files are NUL-separated; the key would be found whatever surrounds it.
        `if env | grep -q '${FAKE_KEY}'; then echo "key in env"; else echo "env clean"; fi`,
        `if cat /proc/[0-9]*/environ 2>/dev/null | grep -aq '${FAKE_KEY}'; then echo "key in a process"; else echo "processes clean"; fi`,
        `if grep -raq '${FAKE_KEY}' /code 2>/dev/null; then echo "key in /code"; else echo "code clean"; fi`,
      ].join('\n'),
      KEY_PROBE_EXECUTOR,
    );
    expect(text).toContain('env clean');
    expect(text).toContain('processes clean');
    expect(text).toContain('code clean');
    // The variable holds the prompt token instead, or nothing.
    expect(text).toMatch(/key variable: (agp1\.|absent)/);
  }, 360_000);
});
