// What the real-node tests share: the release the global setup installed with helm, an API client
// that talks to it only through its Service (as any client in the cluster would), and kubectl.
import { z } from 'zod';
import { readTaskStream } from '../support/sse.js';
import type { StreamRead } from '../support/sse.js';
import { run } from '../cluster/harness/tools.js';

/** The environment variable through which the global setup tells test workers about the release. */
export const DEPLOYMENT_ENV = 'AGENTRY_TEST_REAL_NODE';

export const RealNodeDeploymentSchema = z.object({
  kubeconfig: z.string(),
  toolsPath: z.string(),
  workdir: z.string(),
  nodeName: z.string(),
  nodeIp: z.string(),
  podCidr: z.string(),
  containerdSocket: z.string(),
  motoHostUrl: z.string(),
  motoPodUrl: z.string(),
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
  const raw = process.env[DEPLOYMENT_ENV];
  if (raw === undefined) throw new Error('no real-node deployment: run the realnode jest project');
  return RealNodeDeploymentSchema.parse(JSON.parse(raw));
}

export function kubectl(args: string[], input?: string): Promise<string> {
  const d = deployment();
  return run('kubectl', ['--kubeconfig', d.kubeconfig, ...args], {
    env: { ...process.env, PATH: `${d.toolsPath}:${process.env.PATH ?? ''}` },
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

/** Polls until `check` returns a value; the message names what never happened. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 120_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`${what}: not within ${timeoutMs} ms`, last === undefined ? {} : { cause: last });
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
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
export function streamTask(
  taskId: string,
  options: { promptId?: string; timeoutMs?: number } = {},
): Promise<StreamRead> {
  const d = deployment();
  const query = options.promptId === undefined ? '' : `?promptId=${options.promptId}`;
  return readTaskStream(`${d.apiUrl}/v1/tasks/${taskId}/events${query}`, {
    key: d.apiKey,
    timeoutMs: options.timeoutMs ?? 180_000,
  });
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

/** Names of the objects of a kind that exist in a namespace with the given selector. */
export async function objectNames(kind: string, namespace: string, selector: string): Promise<string[]> {
  const out = await kubectl(['get', kind, '-n', namespace, '-l', selector, '-o', 'name']);
  return out
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}
