// The environment: store, organization, webhooks, receivers, controller managers.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { OrganizationSpecSchema, OrganizationType, WebhookType, apiVersionOf } from '../../crds/index.js';
import { ControllerManager } from '../../operator/controller/index.js';
import { addWebhookDeliveryController } from '../../operator/webhook/controller.js';
import { InstallationKey } from '../../platform/installation-key.js';
import { createLogger } from '../../platform/log.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { cleanupStep } from '../support/cleanup.js';
import { CONTROL, LOG_LEVEL, NS, ORG, PUBLIC_URL, WEBHOOKS } from './config.js';
import { CountingStore } from './counting-store.js';
import { LogCounter } from './log-counter.js';
import { Receiver, Recorder, mergedRecorder } from './receivers.js';

interface Env {
  dir: string | undefined;
  store: EmbeddedStore | undefined;
  counting: CountingStore | undefined;
  receivers: Receiver[];
  managers: ControllerManager[];
  registry: Registry | undefined;
}

export const env: Env = {
  dir: undefined,
  store: undefined,
  counting: undefined,
  receivers: [],
  managers: [],
  registry: undefined,
};

export const logs = new LogCounter();

export const storeOf = (): EmbeddedStore => {
  if (env.store === undefined) throw new Error('the store is not open');
  return env.store;
};

/** The store, the organization, and WEBHOOKS webhooks subscribed to every event, each with its receiver. */
export async function setUp(): Promise<void> {
  env.dir = await mkdtemp(join(tmpdir(), 'agentry-bench-webhooks-'));
  const store = await EmbeddedStore.open(join(env.dir, 'store'));
  env.store = store;
  env.counting = new CountingStore(store);
  await store.create(OrganizationType, {
    apiVersion: apiVersionOf(OrganizationType),
    kind: 'Organization',
    metadata: { name: ORG },
    spec: OrganizationSpecSchema.parse({ displayName: 'Bench', allowPrivateWebhookTargets: true }),
  });
  for (let i = 0; i < WEBHOOKS; i++) {
    const receiver = new Receiver(`wh-${i}`);
    env.receivers.push(receiver);
    await receiver.start();
    await store.create(WebhookType, {
      apiVersion: apiVersionOf(WebhookType),
      kind: 'Webhook',
      metadata: { name: receiver.webhook, namespace: NS },
      spec: {
        url: receiver.url,
        events: ['task.created', 'task.running', 'task.completed', 'task.failed', 'task.canceled'],
      },
    });
  }
}

/** A ControllerManager running only the webhook-delivery controller, as the operator adds it. */
export async function startDelivery(): Promise<ControllerManager> {
  const counting = env.counting;
  if (counting === undefined) throw new Error('the store is not open');
  const registry = new Registry();
  const logger = createLogger({ level: LOG_LEVEL ?? 'warn' }, logs);
  const manager = new ControllerManager({ store: counting, logger, registry, gracePeriodMs: 1000 });
  env.managers.push(manager);
  env.registry = registry;
  addWebhookDeliveryController(manager, {
    store: counting,
    logger,
    registry,
    controlNamespace: CONTROL,
    installationKey: new InstallationKey(randomBytes(32)),
    publicUrl: PUBLIC_URL,
    allowPrivateTargets: true,
  });
  await manager.start();
  return manager;
}

/** Stops everything that was started; never throws. */
export async function tearDown(): Promise<void> {
  for (const manager of env.managers.splice(0))
    await cleanupStep('stopping a controller manager', () => manager.stop());
  for (const receiver of env.receivers.splice(0))
    await cleanupStep('stopping a receiver', () => receiver.stop());
  const store = env.store;
  env.store = undefined;
  if (store !== undefined) await cleanupStep('closing the store', () => store.close());
  const dir = env.dir;
  if (dir !== undefined)
    await cleanupStep('removing the data directory', () => rm(dir, { recursive: true, force: true }));
}

/** A new phase: every receiver starts recording afresh. */
export function resetRecorders(): void {
  for (const receiver of env.receivers) receiver.recorder = new Recorder();
}

/** What every receiver got in this phase, as one recorder. */
export const received = (): Recorder => mergedRecorder(env.receivers);

export const arrivedCount = (): number => env.receivers.reduce((sum, r) => sum + r.recorder.arrivals.size, 0);
