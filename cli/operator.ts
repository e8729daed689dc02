import { parseArgs } from 'node:util';
import type { Runtime } from '../crds/index.js';
import { startOperator } from '../operator/operator.js';
import { notificationQueuesFromConfig } from '../platform/lake-notifications/queues.js';
import { KubevirtRuntime } from '../operator/runtimes/kubevirt.js';
import { PodRuntime } from '../operator/runtimes/pod.js';
import { apiServerPods, egressThroughProxy, egressWith } from '../operator/runtimes/network-policy.js';
import type { ControlPlaneEgress, EgressOptions } from '../operator/runtimes/network-policy.js';
import type { WorkloadRuntime } from '../operator/runtimes/types.js';
import type { Config } from '../platform/config.js';
import { ConfigSchema, loadConfig, publicUrlOf } from '../platform/config.js';
import { DEFAULT_MAX_RESULT_BYTES } from '../platform/lake-protocol.js';
import { createLogger } from '../platform/log.js';
import type { Logger } from '../platform/log.js';
import { createMetricsRegistry } from '../platform/metrics.js';
import { parseDuration } from '../platform/duration.js';
import { loadExecutorCatalog } from '../platform/executor-catalog.js';
import { loadSkillCatalog } from '../platform/skill-catalog.js';
import { ensureInstallationKey } from '../platform/installation-key.js';
import { openObjectStore } from '../platform/objectstore/open.js';
import { openStore } from '../platform/store/open.js';
import { webhookDeliverySettings } from './webhook-delivery-settings.js';
import type { ResourceStore } from '../platform/store/types.js';
import type { CliCommand } from './command.js';
import { startHealthServer } from './health-server.js';
import { settingsHelp } from './settings-help.js';

const USAGE = `usage: agentry operator

The operator alone: reconciles agent computers, tasks, context lakes, organizations and webhooks
against the store (a cluster, with AGENTRY_STORE=kubernetes), running workspaces as Pods or
KubeVirt VMs. Serves /metrics, /healthz and /readyz on AGENTRY_METRICS_PORT. Exits 1 when it loses
leadership, so that Kubernetes restarts it as a fresh candidate.

${settingsHelp(ConfigSchema, [
  ['AGENTRY_METRICS_PORT', 'port of /metrics, /healthz and /readyz'],
  ['AGENTRY_HOST', 'address that port listens on'],
  ['AGENTRY_STORE', 'embedded (AGENTRY_DATA_DIR) or kubernetes (KUBECONFIG or in cluster)'],
  ['AGENTRY_NAMESPACE', 'the control namespace (leader election Lease, keys)'],
  ['AGENTRY_LEADER_ELECTION', 'only the Lease holder reconciles; false only with one replica'],
  ['AGENTRY_RUNTIMES', 'runtimes it may use, comma separated: pod, kubevirt'],
  ['AGENTRY_DEFAULT_RUNTIME', 'where agent computers run unless their spec says'],
  ['AGENTRY_RUNNER_IMAGE', 'image of the runner (pods) or VM disk (kubevirt)'],
  ['AGENTRY_LAKE_IMAGE', 'image of the context-lake server'],
  ['AGENTRY_WORKLOAD_CPU', 'CPU of a workspace unless its spec says'],
  ['AGENTRY_WORKLOAD_MEMORY', 'memory of a workspace unless its spec says'],
  ['AGENTRY_WORKLOAD_DISK', 'disk of a workspace unless its spec says'],
  ['AGENTRY_LOG_LEVEL', 'fatal, error, warn, info, debug, trace or silent'],
])}  More settings (placement, egress, webhooks, SQS): docs/configuration.md#settings.

example:
  AGENTRY_STORE=kubernetes AGENTRY_RUNTIMES=pod agentry operator
`;

/** `agentry operator` as a command: no arguments. */
export const operatorCommand: CliCommand = {
  usage: () => USAGE,
  run: async (args) => {
    parseArgs({ args, options: {} });
    return runOperatorCommand(loadConfig());
  },
};

/** The API server as workspaces reach it, when prompts go through its model gateway (docs/adr/0009). */
const modelGatewayUrl = (config: Config): string | undefined =>
  config.AGENTRY_MODEL_GATEWAY === 'enabled' ? config.AGENTRY_INTERNAL_URL : undefined;

/** The API pods on their port, when workspaces reach the API server (the model gateway, the lake client). */
const apiServerTargets = (config: Config): ControlPlaneEgress[] =>
  config.AGENTRY_INTERNAL_URL === undefined ? [] : [apiServerPods(config.AGENTRY_NAMESPACE)];

/** With the egress proxy, workspaces reach only it, the API server (gateway, lake client), DNS and the installation's exceptions. */
export function workspaceEgressOf(config: Config): EgressOptions | undefined {
  if (config.AGENTRY_EGRESS_PROXY_URL === undefined) return undefined;
  const proxy = new URL(config.AGENTRY_EGRESS_PROXY_URL);
  const port = proxy.port === '' ? (proxy.protocol === 'https:' ? 443 : 80) : Number(proxy.port);
  const throughProxy = egressThroughProxy(
    config.AGENTRY_NAMESPACE,
    port,
    config.AGENTRY_WORKLOAD_EGRESS_ALLOW,
    config.AGENTRY_WORKLOAD_DNS_SERVERS,
  );
  return {
    ...throughProxy,
    controlPlane: [...apiServerTargets(config), ...(throughProxy.controlPlane ?? [])],
  };
}

function clusterRuntimes(
  store: ResourceStore,
  config: Config,
  logger: Logger,
): Map<Runtime, WorkloadRuntime> {
  const common = {
    store,
    controlNamespace: config.AGENTRY_NAMESPACE,
    defaultImage: config.AGENTRY_RUNNER_IMAGE,
    defaults: {
      cpu: config.AGENTRY_WORKLOAD_CPU,
      memory: config.AGENTRY_WORKLOAD_MEMORY,
      disk: config.AGENTRY_WORKLOAD_DISK,
    },
    ...(config.AGENTRY_STORAGE_CLASS === undefined ? {} : { storageClassName: config.AGENTRY_STORAGE_CLASS }),
    placement: {
      nodeSelector: config.AGENTRY_WORKLOAD_NODE_SELECTOR,
      tolerations: config.AGENTRY_WORKLOAD_TOLERATIONS,
    },
    egress: {
      ...egressWith(config.AGENTRY_WORKLOAD_EGRESS_ALLOW, config.AGENTRY_WORKLOAD_DNS_SERVERS),
      controlPlane: apiServerTargets(config),
    },
    workspaceEgress: workspaceEgressOf(config),
    // Context lakes: the lake server's image (pods) or VM disk (kubevirt), and what datasets may read.
    lake: {
      image: config.AGENTRY_LAKE_IMAGE,
      connectors: config.AGENTRY_LAKE_CONNECTORS,
      fileRoots: config.AGENTRY_LAKE_FILE_ROOTS,
      allowPrivateTargets: config.AGENTRY_LAKE_PRIVATE_TARGETS === 'true',
      ...(config.AGENTRY_LAKE_MAX_RESULT_BYTES === DEFAULT_MAX_RESULT_BYTES
        ? {}
        : { maxResultBytes: config.AGENTRY_LAKE_MAX_RESULT_BYTES }),
    },
  };
  const runtimes = new Map<Runtime, WorkloadRuntime>();
  if (config.AGENTRY_RUNTIMES.includes('pod'))
    runtimes.set('pod', new PodRuntime({ ...common, logger: logger.child({ runtime: 'pod' }) }));
  if (config.AGENTRY_RUNTIMES.includes('kubevirt')) {
    runtimes.set(
      'kubevirt',
      new KubevirtRuntime({
        ...common,
        diskPullMethod: config.AGENTRY_VM_DISK_PULL_METHOD,
        logger: logger.child({ runtime: 'kubevirt' }),
      }),
    );
  }
  return runtimes;
}

/**
 * `agentry operator`: the reconcilers against a cluster (or any configured store), with leader
 * election, serving /metrics, /healthz and /readyz. Exits 1 when it loses leadership, so that
 * Kubernetes restarts it as a fresh candidate.
 */
export async function runOperatorCommand(config: Config): Promise<number> {
  const logger = createLogger({ level: config.AGENTRY_LOG_LEVEL, name: 'agentry-operator' });
  const store = await openStore(config);
  const registry = createMetricsRegistry();
  let ready = false;
  const health = await startHealthServer(config, registry, () => ready);
  const stopRequested = new Promise<'signal'>((resolve) => {
    process.once('SIGINT', () => {
      resolve('signal');
    });
    process.once('SIGTERM', () => {
      resolve('signal');
    });
  });
  const installationKey = await ensureInstallationKey(store, config.AGENTRY_NAMESPACE);
  const lakeNotificationQueues = notificationQueuesFromConfig(config);
  const operator = await startOperator({
    store,
    logger,
    registry,
    runtimes: clusterRuntimes(store, config, logger),
    defaultRuntime: config.AGENTRY_DEFAULT_RUNTIME === 'process' ? 'pod' : config.AGENTRY_DEFAULT_RUNTIME,
    controlNamespace: config.AGENTRY_NAMESPACE,
    installationKey,
    keepRunnerConnections: true,
    // The API server's store: signed URLs of the filesystem store point at the API (AGENTRY_PUBLIC_URL).
    objectStore: openObjectStore(config, { installationKey, publicUrl: publicUrlOf(config) }),
    executors: await loadExecutorCatalog(config.AGENTRY_EXECUTORS_FILE),
    skills: await loadSkillCatalog(config.AGENTRY_SKILLS_FILE),
    deletedTaskRetentionMs: parseDuration(config.AGENTRY_DELETED_TASK_RETENTION),
    webhooks: webhookDeliverySettings(config, false),
    defaultWorkspacePool: config.AGENTRY_DEFAULT_WORKSPACE_POOL ?? undefined,
    workspaceAccess: {
      apiUrl: config.AGENTRY_INTERNAL_URL,
      gatewayUrl: modelGatewayUrl(config),
      egressProxyUrl: config.AGENTRY_EGRESS_PROXY_URL,
    },
    ...(lakeNotificationQueues === undefined ? {} : { lakeNotificationQueues }),
    ...(config.AGENTRY_LEADER_ELECTION
      ? { leaderElection: { namespace: config.AGENTRY_NAMESPACE, name: 'agentry-operator' } }
      : {}),
  });
  ready = true;
  logger.info(
    { runtimes: config.AGENTRY_RUNTIMES, metricsPort: config.AGENTRY_METRICS_PORT },
    'operator running',
  );
  const outcome = await Promise.race([stopRequested, operator.done]);
  await operator.stop();
  lakeNotificationQueues?.close();
  health.close();
  await store.close();
  if (outcome === 'lost-leadership')
    logger.error('lost leadership; exiting so a fresh process campaigns again');
  return outcome === 'lost-leadership' ? 1 : 0;
}
