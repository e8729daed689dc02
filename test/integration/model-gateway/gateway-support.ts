import { randomUUID } from 'node:crypto';
import {
  OrganizationType,
  SecretType,
  TaskSpecSchema,
  TaskType,
  apiVersionOf,
  secretData,
} from '../../../crds/index.js';
import type { ModelBudget, Organization, Task } from '../../../crds/index.js';
import { PromptTokens } from '../../../platform/model-gateway/token.js';
import type { PromptTokenClaims } from '../../../platform/model-gateway/token.js';
import type { ResourceStore } from '../../../platform/store/types.js';
import { eventually, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { startModelProviderStandIn } from '../../support/model-provider-stand-in.js';
import type { ModelProviderStandIn } from '../../support/model-provider-stand-in.js';

/** Helpers shared by the model gateway's tests (not a test file itself). */

export const ORG = 'acme';
export const NAMESPACE = `agentry-org-${ORG}`;

/** The organization's real keys, in the Secrets the built-in executors name. */
export const REAL_KEYS = {
  anthropic: 'sk-ant-real-key-of-acme',
  openai: 'sk-openai-real-key-of-acme',
  gemini: 'gemini-real-key-of-acme',
} as const;

export interface GatewayFixture {
  api: TestApi;
  standIn: ModelProviderStandIn;
  tokens: PromptTokens;
  stop(): Promise<void>;
}

/** An API whose gateway forwards every provider to a stand-in, and an organization with keys. */
export async function startGateway(
  options: {
    store?: ResourceStore;
    standIn?: ModelProviderStandIn;
    idleTimeoutMs?: number;
    maxBodyBytes?: number;
    logDestination?: { write(line: string): void };
    /** The embedded default's environment fallback of key variables. */
    keyFallback?: Record<string, string>;
    /** Whether the organization's key Secrets are written (default true). */
    secrets?: boolean;
  } = {},
): Promise<GatewayFixture> {
  const standIn = options.standIn ?? (await startModelProviderStandIn());
  const api = await startTestApi({
    ...(options.store === undefined ? {} : { store: options.store }),
    ...(options.logDestination === undefined ? {} : { logDestination: options.logDestination }),
    modelGateway: {
      ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes }),
      ...(options.keyFallback === undefined ? {} : { keyFallback: options.keyFallback }),
      upstreams: { anthropic: standIn.url, openai: standIn.url, gemini: standIn.url },
      ...(options.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: options.idleTimeoutMs }),
    },
  });
  await api.organization(ORG);
  if (options.secrets !== false) await writeKeySecrets(api.store);
  return {
    api,
    standIn,
    tokens: new PromptTokens(api.installationKey),
    async stop() {
      await api.stop();
      if (options.standIn === undefined) await standIn.close();
    },
  };
}

async function writeKeySecrets(store: ResourceStore): Promise<void> {
  const secrets: [string, Record<string, string>][] = [
    ['agentry-executor-claude', { ANTHROPIC_API_KEY: REAL_KEYS.anthropic }],
    ['agentry-executor-codex', { OPENAI_API_KEY: REAL_KEYS.openai }],
    ['agentry-executor-gemini', { GEMINI_API_KEY: REAL_KEYS.gemini }],
  ];
  for (const [name, values] of secrets) {
    if ((await store.get(SecretType, NAMESPACE, name)) !== undefined) continue;
    await store.create(SecretType, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: NAMESPACE },
      data: secretData(values),
    });
  }
}

/** A running prompt of a new task (its status written as the operator would), and its token. */
export interface RunningPrompt {
  task: Task;
  prompt: string;
  token: string;
  claims: PromptTokenClaims;
}

export async function runningPrompt(
  fixture: Pick<GatewayFixture, 'api' | 'tokens'>,
  options: {
    executor?: string;
    budget?: ModelBudget;
    /** The prompt's recorded status (pending: dispatched, not yet started; unrecorded: no status written yet). */
    status?: 'unrecorded' | 'pending' | 'running' | 'succeeded';
    /** The client asked to cancel it. */
    cancelRequested?: boolean;
  } = {},
): Promise<RunningPrompt> {
  const { api } = fixture;
  const prompt = randomUUID();
  const name = randomUUID();
  const executor = options.executor ?? 'claude';
  const created = await api.store.create(TaskType, {
    apiVersion: apiVersionOf(TaskType),
    kind: TaskType.kind,
    metadata: { name, namespace: NAMESPACE },
    spec: TaskSpecSchema.parse({
      workspace: 'ws-1',
      executor,
      title: 'gateway test',
      owner: 'alice',
      prompts: [
        {
          id: prompt,
          text: 'hello',
          submittedAt: new Date().toISOString(),
          ...(options.cancelRequested === true ? { cancelRequestedAt: new Date().toISOString() } : {}),
        },
      ],
      ...(options.budget === undefined ? {} : { budget: options.budget }),
    }),
  });
  const now = new Date().toISOString();
  const status = options.status ?? 'running';
  const task = status === 'unrecorded' ? created : await recordPrompt(api, created, prompt, status, now);
  await eventually(
    () =>
      api.readModel.tasks.get(NAMESPACE, name)?.metadata.resourceVersion === task.metadata.resourceVersion,
  );
  const claims: PromptTokenClaims = {
    namespace: NAMESPACE,
    task: name,
    prompt,
    executor,
    workspace: 'ws-1',
    exp: Math.ceil(Date.now() / 1000) + 3600,
  };
  return { task, prompt, token: fixture.tokens.issue(claims), claims };
}

/** The operator's record of the prompt, as it writes it once the runner took it. */
function recordPrompt(
  api: TestApi,
  created: Task,
  prompt: string,
  status: 'pending' | 'running' | 'succeeded',
  now: string,
): Promise<Task> {
  return api.store.replaceStatus(TaskType, {
    ...created,
    status: {
      status: status === 'succeeded' ? 'completed' : 'running',
      prompts: [
        {
          id: prompt,
          status,
          dispatchedAt: now,
          ...(status === 'pending' ? {} : { startedAt: now }),
          ...(status === 'succeeded' ? { completedAt: now } : {}),
        },
      ],
    },
  });
}

/** The task as stored now. */
export async function storedTask(api: TestApi, name: string): Promise<Task> {
  const task = await api.store.get(TaskType, NAMESPACE, name);
  if (task === undefined) throw new Error(`task ${name} is gone`);
  return task;
}

/** The organization as stored now. */
export async function storedOrganization(api: TestApi): Promise<Organization> {
  const org = await api.store.get(OrganizationType, undefined, ORG);
  if (org === undefined) throw new Error('the organization is gone');
  return org;
}

/** Changes the organization's spec (a budget) and waits until the API's cache has it. */
export async function setOrganizationBudget(api: TestApi, budget: ModelBudget): Promise<void> {
  const org = await storedOrganization(api);
  const written = await api.store.replace(OrganizationType, { ...org, spec: { ...org.spec, budget } });
  await eventually(
    () =>
      api.readModel.organizations.get(undefined, ORG)?.metadata.resourceVersion ===
      written.metadata.resourceVersion,
  );
}

/** A call to the gateway: `path` below /model-gateway, a JSON body. */
export function gatewayCall(
  api: Pick<TestApi, 'url'>,
  path: string,
  init: { headers?: Record<string, string>; body?: unknown; method?: string; signal?: AbortSignal } = {},
): Promise<Response> {
  return fetch(`${api.url}/model-gateway${path}`, {
    method: init.method ?? 'POST',
    headers: { 'content-type': 'application/json', ...init.headers },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    ...(init.signal === undefined ? {} : { signal: init.signal }),
  });
}
