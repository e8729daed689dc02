// What the egress proxy's tests share: the proxy on loopback over an embedded store, a prompt's
// Task (and its Organization and workspace), tokens, and clients that talk through the proxy.
import { request } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Registry } from 'prom-client';
import type { EgressRule } from '../../../crds/egress.js';
import {
  AgentComputerSpecSchema,
  AgentComputerType,
  OrganizationSpecSchema,
  OrganizationType,
  TaskType,
} from '../../../crds/index.js';
import type { PromptStatus, Task } from '../../../crds/index.js';
import { createEgressProxy } from '../../../egress/proxy.js';
import type { EgressProxy } from '../../../egress/proxy.js';
import { ensureInstallationKey } from '../../../platform/installation-key.js';
import type { InstallationKey } from '../../../platform/installation-key.js';
import { createLogger } from '../../../platform/log.js';
import { createMetricsRegistry } from '../../../platform/metrics.js';
import { PromptTokens } from '../../../platform/model-gateway/token.js';
import type { HostLookup } from '../../../platform/outbound-targets.js';
import { EmbeddedStore } from '../../../platform/store/embedded.js';

export const ORG = 'acme';
export const ORG_NAMESPACE = `agentry-org-${ORG}`;
export const WORKSPACE = 'ws-1';

/** Test names: every one resolves to loopback (the only address a test may connect to). */
export const loopbackLookup: HostLookup = (hostname) =>
  Promise.resolve(hostname.endsWith('.test') ? [{ address: '127.0.0.1', family: 4 }] : []);

export interface ProxyFixture {
  store: EmbeddedStore;
  key: InstallationKey;
  tokens: PromptTokens;
  proxy: EgressProxy;
  port: number;
  registry: Registry;
  /** A new proxy over the same store (a restart); the old one is stopped first. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function listen(proxy: EgressProxy): Promise<number> {
  await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
  const address = proxy.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** The organization's own rules (spec.egress.allow). */
export async function organizationAllowing(fixture: ProxyFixture, allow: EgressRule[]): Promise<void> {
  const org = await fixture.store.get(OrganizationType, undefined, ORG);
  if (org === undefined) throw new Error('no organization');
  await fixture.store.replace(OrganizationType, { ...org, spec: { ...org.spec, egress: { allow } } });
}

export async function startProxyFixture(allow: readonly EgressRule[]): Promise<ProxyFixture> {
  const dir = await mkdtemp(join(tmpdir(), 'agentry-egress-'));
  const store = await EmbeddedStore.open(dir);
  const key = await ensureInstallationKey(store, 'agentry-system');
  const logger = createLogger({ level: 'silent' });
  const start = async (): Promise<{ proxy: EgressProxy; port: number; registry: Registry }> => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const proxy = createEgressProxy({
      store,
      installationKey: key,
      logger,
      registry,
      allow,
      allowPrivateTargets: true,
      lookup: loopbackLookup,
      idleTimeoutMs: 10_000,
    });
    await proxy.start();
    return { proxy, port: await listen(proxy), registry };
  };
  const fixture: ProxyFixture = {
    store,
    key,
    tokens: new PromptTokens(key),
    ...(await start()),
    async restart() {
      await fixture.proxy.stop();
      Object.assign(fixture, await start());
    },
    async stop() {
      await fixture.proxy.stop();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  await store.create(OrganizationType, {
    apiVersion: 'agentry.dev/v1alpha1',
    kind: 'Organization',
    metadata: { name: ORG },
    spec: OrganizationSpecSchema.parse({ displayName: 'Acme', plan: 'pro' }),
  });
  return fixture;
}

const PROMPT_ID = '00000000-0000-4000-8000-00000000000a';

/** A Task of one prompt in the organization's namespace, its status entry as given; and a token for it. */
export async function promptOf(
  fixture: ProxyFixture,
  name: string,
  status: PromptStatus = 'running',
  workspace = WORKSPACE,
): Promise<{ task: Task; token: string }> {
  const created = await fixture.store.create(TaskType, {
    apiVersion: 'agentry.dev/v1alpha1',
    kind: 'Task',
    metadata: { name, namespace: ORG_NAMESPACE },
    spec: {
      workspace,
      executor: 'shell',
      title: name,
      owner: 'u',
      visibility: 'shared',
      prompts: [{ id: PROMPT_ID, text: 'x', submittedAt: '2026-11-25T10:00:00.000Z' }],
    },
  });
  const task = await fixture.store.replaceStatus(TaskType, {
    ...created,
    status: { prompts: [{ id: PROMPT_ID, status }] },
  });
  const token = fixture.tokens.issue({
    namespace: ORG_NAMESPACE,
    task: name,
    prompt: PROMPT_ID,
    executor: 'shell',
    workspace,
    exp: Math.ceil(Date.now() / 1000) + 600,
  });
  return { task, token };
}

/** A workspace with its own egress rules. */
export async function workspaceAllowing(
  fixture: ProxyFixture,
  name: string,
  allow: EgressRule[],
): Promise<void> {
  await fixture.store.create(AgentComputerType, {
    apiVersion: 'agentry.dev/v1alpha1',
    kind: 'AgentComputer',
    metadata: { name, namespace: ORG_NAMESPACE },
    spec: AgentComputerSpecSchema.parse({ displayName: name, egress: { allow } }),
  });
}

export const proxyAuthorization = (token: string): string =>
  `Basic ${Buffer.from(`prompt:${token}`).toString('base64')}`;

export interface ConnectAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** The tunnel, when the proxy answered 200. */
  socket: Socket;
}

/** A CONNECT through the proxy; resolves with its answer (and the open socket on 200). */
export function connectThrough(port: number, authority: string, token?: string): Promise<ConnectAnswer> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'CONNECT',
      path: authority,
      headers: token === undefined ? {} : { 'proxy-authorization': proxyAuthorization(token) },
    });
    req.once('connect', (res, socket, head) => {
      if (res.statusCode === 200) {
        if (head.length > 0) socket.unshift(head);
        resolve({ status: 200, headers: res.headers, body: '', socket });
        return;
      }
      let body = head.toString();
      socket.on('data', (chunk: Buffer) => (body += chunk.toString()));
      socket.once('close', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, socket });
      });
    });
    req.once('error', reject);
    req.end();
  });
}

/** A plain-HTTP GET through the proxy in absolute form. */
export function getThrough(
  port: number,
  url: string,
  token?: string,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'GET',
      path: url,
      headers: {
        host: new URL(url).host,
        ...(token === undefined ? {} : { 'proxy-authorization': proxyAuthorization(token) }),
      },
    });
    req.once('response', (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.once('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });
    req.once('error', reject);
    req.end();
  });
}
