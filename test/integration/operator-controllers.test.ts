// startOperator adds each kind's controllers (operator/<kind>/controller.ts), and those of optional
// features only with their settings; which ones run is read from the work queues' metrics.
import { afterEach, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { startOperator } from '../../operator/operator.js';
import type { OperatorOptions, RunningOperator } from '../../operator/operator.js';
import { ExecutorCatalog } from '../../platform/executor-catalog.js';
import { InstallationKey } from '../../platform/installation-key.js';
import { SqsNotificationQueues } from '../../platform/lake-notifications/queues.js';
import { createLogger } from '../../platform/log.js';
import { FilesystemObjectStore } from '../../platform/objectstore/filesystem.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';

const ALWAYS = ['agentcomputer', 'contextlake', 'organization', 'task', 'workspacepool'];

let dir: string | undefined;
let store: EmbeddedStore | undefined;
let operator: RunningOperator | undefined;

afterEach(async () => {
  await operator?.stop();
  operator = undefined;
  await store?.close();
  store = undefined;
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Starts the operator over an empty embedded store; answers the names of the controllers it runs. */
async function controllersStarted(
  extra: (root: string) => Partial<OperatorOptions> = () => ({}),
): Promise<string[]> {
  const root = await mkdtemp(join(tmpdir(), 'agentry-operator-controllers-'));
  dir = root;
  const registry = new Registry();
  store = await EmbeddedStore.open(join(root, 'store'));
  operator = await startOperator({
    store,
    logger: createLogger({ level: 'silent' }),
    registry,
    runtimes: new Map(),
    defaultRuntime: 'process',
    installationKey: new InstallationKey(randomBytes(32)),
    executors: new ExecutorCatalog(),
    ...extra(root),
  });
  const depth = (await registry.getMetricsAsJSON()).find((m) => m.name === 'agentry_workqueue_depth');
  return (depth?.values ?? []).map((value) => String(value.labels['controller'])).sort();
}

describe('the operator', () => {
  it('runs the organization, agent computer, task, context lake and workspace pool controllers and no optional ones without their settings', async () => {
    expect(await controllersStarted()).toEqual(ALWAYS);
  });

  it('runs webhook delivery, lake notifications and uploaded-file expiry when given their settings', async () => {
    const started = await controllersStarted((root) => ({
      webhooks: { publicUrl: 'http://agentry.test', allowPrivateTargets: false },
      // Never called: no lake asks for notifications.
      lakeNotificationQueues: new SqsNotificationQueues({
        region: 'us-east-1',
        endpoint: 'http://127.0.0.1:1',
        queuePrefix: 'agentry-test-',
      }),
      objectStore: new FilesystemObjectStore({
        root: join(root, 'objects'),
        baseUrl: 'http://127.0.0.1:1',
        signingSecret: randomBytes(32),
      }),
    }));
    expect(started).toEqual(
      [...ALWAYS, 'lake-notifications', 'uploaded-file-expiry', 'webhook-delivery'].sort(),
    );
  });
});
