// What the real-node tests share: the running node (its global setup's state), kubectl against its
// cluster, image import into its containerd and pod helpers; and, once global setup has installed
// Agentry with helm (install-agentry.ts), an API client that talks to the release only through its
// Service, as any client in the cluster would.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { readTaskStream } from '../support/sse.js';
import { until } from '../support/until.js';
import type { StreamRead } from '../support/sse.js';
import { kubectlFlags } from '../cluster/harness/cluster.js';
import { run } from '../cluster/harness/tools.js';
import { containerIds, importImage as importIntoContainerd } from './harness/containerd.js';
import { REAL_NODE_ENV, RealNodeEnvSchema } from './harness/env.js';
import type { RealNodeEnv } from './harness/env.js';
import { BUSYBOX_IMAGE, REAL_NODE_LABEL } from './harness/layout.js';

export { BUSYBOX_IMAGE };

/** The node global setup started; a test outside the realnode project has none and fails loudly. */
export function testRealNode(): RealNodeEnv {
  const raw = process.env[REAL_NODE_ENV];
  if (raw === undefined) {
    throw new Error('no real node: run the realnode project (npm run test:realnode), which starts one');
  }
  return RealNodeEnvSchema.parse(JSON.parse(raw));
}

/** The node plus the Agentry release installed on it (same environment variable, more fields). */
export const RealNodeDeploymentSchema = RealNodeEnvSchema.extend({
  release: z.string(),
  namespace: z.string(),
  org: z.string(),
  orgNamespace: z.string(),
  apiUrl: z.string(),
  apiKey: z.string(),
  bucket: z.string(),
  images: z.object({ controlPlane: z.string(), runner: z.string(), lake: z.string() }),
});
export type RealNodeDeployment = z.infer<typeof RealNodeDeploymentSchema>;

export function deployment(): RealNodeDeployment {
  const raw = process.env[REAL_NODE_ENV];
  if (raw === undefined) throw new Error('no real-node deployment: run the realnode jest project');
  return RealNodeDeploymentSchema.parse(JSON.parse(raw));
}

/** kubectl (the harness's own build) against the real node's cluster. */
export function kubectl(args: string[], input?: string): Promise<string> {
  const node = testRealNode();
  return run('kubectl', [...kubectlFlags(node.cluster), ...args], {
    env: { ...process.env, PATH: `${node.toolsPath}:${process.env.PATH ?? ''}` },
    timeoutMs: 120_000,
    ...(input === undefined ? {} : { input }),
  });
}

/** A JSON request to the installed API server through its Service, with the release's first key. */
export async function api(
  path: string,
  options: { method?: string; body?: unknown; key?: string } = {},
): Promise<{ status: number; body: unknown; headers: Headers }> {
  const d = deployment();
  const res = await fetch(`${d.apiUrl}${path}`, {
    method: options.method ?? 'GET',
    headers: {
      'api-key': options.key ?? d.apiKey,
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    signal: AbortSignal.timeout(60_000),
  }).catch(async (err: unknown) => {
    // A dropped connection says little by itself: name the control plane's restarts beside it.
    throw new Error(`${options.method ?? 'GET'} ${path}: ${String(err)}; ${await controlPlaneRestarts()}`, {
      cause: err,
    });
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    // Not JSON (a download): the text itself.
  }
  return { status: res.status, body, headers: res.headers };
}

/** Each control-plane Pod's restarts and why the last one ended, for a failure's message. */
async function controlPlaneRestarts(): Promise<string> {
  const d = deployment();
  const template =
    '{range .items[*]}{.metadata.name} restarts={.status.containerStatuses[0].restartCount} ' +
    'last={.status.containerStatuses[0].lastState.terminated.reason}{"; "}{end}';
  return kubectl(['get', 'pods', '-n', d.namespace, '-o', `jsonpath=${template}`]).then(
    (text) => `control plane: ${text}`,
    (err: unknown) => `control plane Pods unreadable: ${String(err)}`,
  );
}

/** Polls until `check` returns a value; the message names what never happened. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 120_000,
): Promise<T> {
  // A check may throw while the cluster converges (a Pod not yet there): retried, the last error kept.
  let last: unknown;
  const tolerant = (): Promise<T | undefined> =>
    check().catch((err: unknown) => {
      last = err;
      return undefined;
    });
  try {
    return await until(what, tolerant, timeoutMs, 500);
  } catch (err) {
    const lastError = last instanceof Error ? `; last error: ${last.message}` : '';
    throw new Error(`${what}: not within ${timeoutMs} ms${lastError}`, { cause: err });
  }
}

const WorkspaceSchema = z.looseObject({
  id: z.string(),
  status: z.string(),
  provisionError: z.string().nullable(),
});
export type WorkspaceRecord = z.infer<typeof WorkspaceSchema>;

export async function getWorkspace(id: string): Promise<WorkspaceRecord> {
  const res = await api(`/v1/agent-computers/${id}`);
  if (res.status !== 200)
    throw new Error(`GET agent computer ${id}: ${res.status} ${JSON.stringify(res.body)}`);
  return WorkspaceSchema.parse(res.body);
}

export async function waitForWorkspace(
  id: string,
  status: string,
  timeoutMs = 180_000,
): Promise<WorkspaceRecord> {
  return eventually(
    `agent computer ${id} ${status}`,
    async () => {
      const ws = await getWorkspace(id);
      return ws.status === status ? ws : undefined;
    },
    timeoutMs,
  );
}

const CreatedSchema = z.looseObject({ id: z.string() });
export const TaskSchema = z.looseObject({
  id: z.string(),
  status: z.string(),
  workspaceId: z.string(),
  prompts: z.array(z.looseObject({ id: z.string(), status: z.string() })).optional(),
});

export async function createWorkspace(name: string): Promise<string> {
  const res = await api('/v1/agent-computers', { method: 'POST', body: { name } });
  if (res.status !== 201) throw new Error(`POST agent computer: ${res.status} ${JSON.stringify(res.body)}`);
  return CreatedSchema.parse(res.body).id;
}

export async function createTask(body: Record<string, unknown>): Promise<z.infer<typeof TaskSchema>> {
  const res = await api('/v1/tasks', { method: 'POST', body: { executor: 'shell', ...body } });
  if (res.status !== 201) throw new Error(`POST task: ${res.status} ${JSON.stringify(res.body)}`);
  return TaskSchema.parse(res.body);
}

/** The whole stream of a task's latest prompt (or of `promptId`) until `done`. */
export async function streamTask(
  taskId: string,
  options: { promptId?: string; timeoutMs?: number } = {},
): Promise<StreamRead> {
  const d = deployment();
  const query = options.promptId === undefined ? '' : `?promptId=${options.promptId}`;
  const stream = await readTaskStream(`${d.apiUrl}/v1/tasks/${taskId}/events${query}`, {
    key: d.apiKey,
    timeoutMs: options.timeoutMs ?? 180_000,
  });
  // A refused stream is a failure of its own, not an empty one.
  if (stream.status !== 200) throw new Error(`GET /v1/tasks/${taskId}/events answered ${stream.status}`);
  return stream;
}

/** Text the events of a stream carried, joined by newlines (the shell executor: one event a line). */
export const streamText = (stream: StreamRead): string =>
  stream.events
    .map((event) => {
      const content = event.eventType === 'text' ? event.payload.content : undefined;
      return typeof content === 'string' ? content : '';
    })
    .join('\n');

const PodListSchema = z.object({
  items: z.array(
    z.object({
      metadata: z.object({
        name: z.string(),
        uid: z.string(),
        labels: z.record(z.string(), z.string()).optional(),
      }),
      spec: z.object({ nodeName: z.string().optional() }),
      status: z.object({ phase: z.string().optional(), podIP: z.string().optional() }).optional(),
    }),
  ),
});
export type PodSummary = z.infer<typeof PodListSchema>['items'][number];

export async function pods(namespace: string, selector: string): Promise<PodSummary[]> {
  return PodListSchema.parse(
    JSON.parse(await kubectl(['get', 'pods', '-n', namespace, '-l', selector, '-o', 'json'])),
  ).items;
}

/**
 * The runner Pod of agent computer `id` in the organization's namespace, and the command lines of
 * the processes inside it (the runner answering is ours, not a fake status).
 */
export async function runnerPod(id: string): Promise<{ pod: PodSummary | undefined; processes: string }> {
  const namespace = deployment().orgNamespace;
  const [pod] = await pods(namespace, `agentry.dev/agent-computer=${id}`);
  const processes =
    pod === undefined
      ? ''
      : await kubectl(['exec', '-n', namespace, pod.metadata.name, '--', 'ps', '-eo', 'args']);
  return { pod, processes };
}

/** Names of the objects of a kind that exist in a namespace with the given selector. */
export async function objectNames(kind: string, namespace: string, selector: string): Promise<string[]> {
  const out = await kubectl(['get', kind, '-n', namespace, '-l', selector, '-o', 'name']);
  return out
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

/**
 * `DELETE /v1/agent-computers/:id`, then waits until no object of `kinds` labelled for it is left in
 * the organization's namespace; the objects still there when it gives up are in the failure.
 */
export async function deleteWorkspaceEntirely(id: string, kinds: string, timeoutMs = 120_000): Promise<void> {
  const d = deployment();
  const res = await api(`/v1/agent-computers/${id}`, { method: 'DELETE' });
  if (![200, 202, 204].includes(res.status)) throw new Error(`DELETE agent computer ${id}: ${res.status}`);
  await eventually(
    `every object of workspace ${id} gone (${kinds})`,
    async () => {
      const left = await objectNames(kinds, d.orgNamespace, `agentry.dev/agent-computer=${id}`);
      if (left.length > 0) throw new Error(`still there: ${left.join(', ')}`);
      return true;
    },
    timeoutMs,
  );
}

/** Imports a docker-archive or OCI tar into the node's containerd (`ctr -n k8s.io images import`). */
export function importImage(archivePath: string): Promise<void> {
  return importIntoContainerd(testRealNode().containerdSocket, archivePath);
}

/** Container ids in the node's containerd (`ctr -n k8s.io containers ls`). */
export function nodeContainerIds(): Promise<string[]> {
  return containerIds(testRealNode().containerdSocket);
}

export async function createNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  await kubectl(['create', 'namespace', name]);
  return name;
}

export async function deleteNamespace(name: string): Promise<void> {
  await kubectl(['delete', 'namespace', name, '--wait=false']);
}

/** A busybox pod pinned to the real node, running `script` with sh. */
export function busyboxPod(
  name: string,
  namespace: string,
  script: string,
  extra: { labels?: Record<string, string>; volumes?: unknown[]; volumeMounts?: unknown[] } = {},
): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: extra.labels ?? { app: name } },
    spec: {
      nodeSelector: { [REAL_NODE_LABEL]: 'true' },
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'main',
          image: BUSYBOX_IMAGE,
          imagePullPolicy: 'Never',
          command: ['sh', '-c', script],
          volumeMounts: extra.volumeMounts ?? [],
        },
      ],
      volumes: extra.volumes ?? [],
    },
  });
}

/** Applies a pod and waits until it is Ready; returns its pod IP. */
export async function runPod(manifest: string, name: string, namespace: string): Promise<string> {
  await kubectl(['apply', '-f', '-'], manifest);
  await kubectl(['wait', '--for=condition=Ready', '--timeout=120s', '-n', namespace, `pod/${name}`]);
  return (await kubectl(['get', 'pod', name, '-n', namespace, '-o', 'jsonpath={.status.podIP}'])).trim();
}

/** Runs a command in a pod's container and returns its output. */
export function exec(namespace: string, pod: string, command: string[]): Promise<string> {
  return kubectl(['exec', '-n', namespace, pod, '--', ...command]);
}

/** A ClusterIP Service in front of pods labelled app=<selector>. */
export function clusterIpService(name: string, namespace: string, selector: string, port: number): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace },
    spec: { selector: { app: selector }, ports: [{ port, targetPort: port }] },
  });
}

/** What POST /v1/agent-computers/:id/previews answers (docs/api.md#previews), as far as tests read it. */
const PreviewSchema = z.looseObject({ id: z.string(), port: z.number(), url: z.string() });

/** A preview URL of the workspace's port, through the installed API server (201 or it throws). */
export async function createPreview(workspaceId: string, port: number): Promise<string> {
  const made = await api(`/v1/agent-computers/${workspaceId}/previews`, { method: 'POST', body: { port } });
  if (made.status !== 201)
    throw new Error(`POST previews answered ${made.status}: ${JSON.stringify(made.body)}`);
  return PreviewSchema.parse(made.body).url;
}

/** A Pod of our runner image on the real node, with these labels, that waits to be exec'd into. */
export async function startProbePod(
  name: string,
  namespace: string,
  labels: Record<string, string>,
): Promise<void> {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels },
    spec: {
      nodeSelector: { [REAL_NODE_LABEL]: 'true' },
      containers: [{ name: 'probe', image: deployment().images.runner, command: ['sleep', 'infinity'] }],
      terminationGracePeriodSeconds: 0,
    },
  };
  await kubectl(['apply', '-f', '-'], JSON.stringify(pod));
  await kubectl(['wait', '--for=condition=Ready', `pod/${name}`, '-n', namespace, '--timeout=120s']);
}

/**
 * A shell prompt that starts a dev server as an agent would: in the background, outliving its prompt
 * (setsid), answering `hello from <hostname> at <path>` on `port`; it prints `listening` once it does.
 */
export const devServerPrompt = (port: number): string =>
  [
    `setsid node -e "require('http').createServer((q, s) => s.end('hello from ' + require('os').hostname() + ' at ' + q.url)).listen(${port}, '0.0.0.0', () => console.log('listening'))" > /tmp/dev.log 2>&1 < /dev/null &`,
    'for i in $(seq 100); do grep -q listening /tmp/dev.log && break; sleep 0.1; done',
    'cat /tmp/dev.log',
  ].join('\n');

/** GET through the installed API server at a preview URL's path (its origin is the release's public URL). */
export async function throughPreview(url: string, path = ''): Promise<{ status: number; text: string }> {
  const res = await fetch(`${deployment().apiUrl}${new URL(url).pathname}${path}`, {
    signal: AbortSignal.timeout(60_000),
  });
  return { status: res.status, text: await res.text() };
}
