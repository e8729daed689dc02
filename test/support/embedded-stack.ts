import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Registry } from 'prom-client';
import { AgentComputerType, ContextLakeType, WorkspacePoolType } from '../../crds/index.js';
import { startOperator } from '../../operator/operator.js';
import type { OperatorOptions, RunningOperator } from '../../operator/operator.js';
import { ProcessRuntime } from '../../operator/runtimes/process.js';
import { ExecutorCatalog } from '../../platform/executor-catalog.js';
import type { SkillCatalog } from '../../platform/skill-catalog.js';
import { ensureInstallationKey } from '../../platform/installation-key.js';
import { ConfigSchema } from '../../platform/config.js';
import type { ProcessIsolation } from '../../platform/config.js';
import { ensureOrganizationFileRoot, organizationFileRoot } from '../../platform/lake-config/file-roots.js';
import type { Connector } from '../../platform/lake-config/dataset-source.js';
import type { SqsNotificationQueues } from '../../platform/lake-notifications/queues.js';
import { createLogger } from '../../platform/log.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { CONTROL_NAMESPACE, startTestApi } from './api-server.js';
import type { PreviewOptions, TestApi, WebPageOptions } from './api-server.js';
import { REPOSITORY_LAKE_COMMAND, REPOSITORY_RUNNER_COMMAND } from './runner-command.js';

/** The embedded default in this process: store, operator with real runner processes, API server. */
export interface EmbeddedStack {
  /** Workspaces live under `<dir>/workspaces`; an organization's lake files under `<dir>/lake-files/<namespace>`. */
  dir: string;
  api: TestApi;
  operator: RunningOperator;
  runtime: ProcessRuntime;
  /** Deletes every warm pool, agent computer and context lake (their processes stop), then stops everything and removes `dir`. */
  stop(): Promise<void>;
}

/** `s3,https,file` (AGENTRY_LAKE_CONNECTORS) as the API's set, parsed as the setting is. */
const lakeConnectorsOf = (list: string): ReadonlySet<Connector> =>
  new Set(ConfigSchema.shape.AGENTRY_LAKE_CONNECTORS.parse(list));

/** The operator's executors, skills (fetched from loopback, as `agentry serve` allows) and ephemeral grace. */
function workspaceAgentOptions(options: {
  executors?: ExecutorCatalog;
  skills?: SkillCatalog;
  ephemeralIdleGraceMs?: number;
}): Pick<OperatorOptions, 'executors' | 'skills' | 'allowPrivateSkillSources' | 'ephemeralIdleGraceMs'> {
  return {
    executors: options.executors ?? new ExecutorCatalog(),
    ...(options.skills === undefined ? {} : { skills: options.skills, allowPrivateSkillSources: true }),
    ...(options.ephemeralIdleGraceMs === undefined
      ? {}
      : { ephemeralIdleGraceMs: options.ephemeralIdleGraceMs }),
  };
}

export async function startEmbeddedStack(
  options: {
    prefix?: string;
    webhooks?: OperatorOptions['webhooks'];
    /** Context lakes run `agentry lake` from the repository with these connectors (default s3,https,file). */
    contextLakes?: OperatorOptions['contextLakes'] & { connectors?: string };
    /** S3 bucket notifications through SQS (moto in the cluster project): the API answers queues, the operator polls them. */
    lakeNotificationQueues?: SqsNotificationQueues;
    /** How runners and lake servers are confined (default bubblewrap, as `agentry serve`). */
    isolation?: ProcessIsolation;
    /** Extra read-only directories of confined runners (a repository to clone...). */
    readOnlyPaths?: string[];
    /** Executors beyond the built-ins, and the skills catalog. */
    executors?: ExecutorCatalog;
    skills?: SkillCatalog;
    /** How long a task-made workspace stays up after its task is idle (the operator's default: 60 s). */
    ephemeralIdleGraceMs?: number;
    /** The web pages the API serves, and its public URL (the browser tests' origin). */
    web?: WebPageOptions;
    /** Preview URL settings of the API (host mode, wake timeout). */
    previews?: PreviewOptions;
  } = {},
): Promise<EmbeddedStack> {
  const dir = await mkdtemp(join(tmpdir(), options.prefix ?? 'agentry-stack-'));
  const connectors = options.contextLakes?.connectors ?? 's3,https,file';
  const store = await EmbeddedStore.open(join(dir, 'store'));
  const logger = createLogger({ level: 'silent' });
  let notify: (ns: string, name: string, program: 'runner' | 'lake') => void = () => undefined;
  const runtime = new ProcessRuntime({
    dataDir: dir,
    runnerCommand: REPOSITORY_RUNNER_COMMAND,
    lakeCommand: REPOSITORY_LAKE_COMMAND,
    // As `agentry serve` does: each organization's lake reads files below its own lake-files directory.
    lakeEnv: (namespace) => ({
      AGENTRY_LAKE_CONNECTORS: connectors,
      AGENTRY_LAKE_FILE_ROOTS: organizationFileRoot(dir, namespace),
      AGENTRY_LAKE_PRIVATE_TARGETS: 'true',
    }),
    logger,
    stopGraceMs: 3_000,
    isolation: options.isolation ?? 'bubblewrap',
    readOnlyPaths: options.readOnlyPaths ?? [],
    // As `agentry serve` does: a confined lake server may read its organization's lake-files directory.
    lakeReadOnlyPaths: (namespace) => [ensureOrganizationFileRoot(dir, namespace)],
    onChange: (ns, name, program) => {
      notify(ns, name, program);
    },
  });
  // The API first: the operator hands runners signed URLs of the API's object store.
  const queues = options.lakeNotificationQueues;
  const api = await startTestApi({
    store,
    lakeFileRoots: (namespace) => [organizationFileRoot(dir, namespace)],
    // As `agentry serve` does: the API accepts the datasets the lakes this stack starts can load.
    lakeConnectors: lakeConnectorsOf(connectors),
    ...(queues === undefined ? {} : { notificationQueues: queues }),
    ...(options.executors === undefined ? {} : { executors: options.executors }),
    ...options.web,
    ...options.previews,
  });
  const operator = await startOperator({
    store,
    logger,
    registry: new Registry(),
    runtimes: new Map([['process', runtime]]),
    defaultRuntime: 'process',
    controlNamespace: CONTROL_NAMESPACE,
    installationKey: await ensureInstallationKey(store, CONTROL_NAMESPACE),
    objectStore: api.objectStore,
    // As `agentry serve` does (its runners listen on loopback).
    keepRunnerConnections: true,
    ...workspaceAgentOptions(options),
    ...(options.webhooks === undefined ? {} : { webhooks: options.webhooks }),
    ...(options.contextLakes === undefined ? {} : { contextLakes: options.contextLakes }),
    ...(queues === undefined ? {} : { lakeNotificationQueues: queues }),
  });
  notify = (ns, name, program) => {
    if (program === 'lake') operator.notifyContextLake(ns, name);
    else operator.notifyAgentComputer(ns, name);
  };
  return {
    dir,
    api,
    operator,
    runtime,
    async stop() {
      // Pools first, or they would make new members as the old ones go.
      const pools = (await store.list(WorkspacePoolType)).items;
      await Promise.all(
        pools.map((pool) => store.delete(WorkspacePoolType, pool.metadata.namespace, pool.metadata.name)),
      );
      const { items } = await store.list(AgentComputerType);
      const lakes = (await store.list(ContextLakeType)).items;
      await Promise.all([
        ...items.map((ac) => store.delete(AgentComputerType, ac.metadata.namespace, ac.metadata.name)),
        ...lakes.map((lake) => store.delete(ContextLakeType, lake.metadata.namespace, lake.metadata.name)),
      ]);
      const remaining = async () =>
        (await store.list(AgentComputerType)).items.length + (await store.list(ContextLakeType)).items.length;
      const deadline = Date.now() + 60_000;
      while ((await remaining()) > 0 && Date.now() < deadline) await sleep(100);
      await operator.stop();
      await runtime.close({ stopRunners: true });
      await api.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
