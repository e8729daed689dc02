import { parseArgs } from 'node:util';
import type { Registry } from 'prom-client';
import { ConfigSchema, loadConfig } from '../platform/config.js';
import type { Config } from '../platform/config.js';
import { createEgressProxy } from '../egress/proxy.js';
import type { EgressProxy } from '../egress/proxy.js';
import { ensureInstallationKey } from '../platform/installation-key.js';
import type { InstallationKey } from '../platform/installation-key.js';
import { listenOn } from '../platform/listen.js';
import { createLogger } from '../platform/log.js';
import type { Logger } from '../platform/log.js';
import { createMetricsRegistry } from '../platform/metrics.js';
import { openStore } from '../platform/store/open.js';
import type { ResourceStore } from '../platform/store/types.js';
import type { CliCommand } from './command.js';
import { startHealthServer } from './health-server.js';
import { settingsHelp } from './settings-help.js';

/** How long a stopping proxy lets open tunnels finish (the chart's grace period is longer). */
const DRAIN_MS = 20_000;

const USAGE = `usage: agentry egress-proxy

The egress proxy of workspaces (docs/egress.md): an HTTP forward proxy (CONNECT and plain http)
on AGENTRY_EGRESS_PROXY_PORT that lets a prompt's processes reach only the allowed hosts, with
its prompt token as the proxy credential. Serves /metrics, /healthz and /readyz on
AGENTRY_METRICS_PORT. On SIGTERM it stops accepting and lets open tunnels finish (20 s).

${settingsHelp(ConfigSchema, [
  ['AGENTRY_EGRESS_PROXY_PORT', 'port of the proxy'],
  ['AGENTRY_METRICS_PORT', 'port of /metrics, /healthz and /readyz'],
  ['AGENTRY_HOST', 'address both ports listen on'],
  ['AGENTRY_STORE', 'embedded (AGENTRY_DATA_DIR) or kubernetes (KUBECONFIG or in cluster)'],
  ['AGENTRY_NAMESPACE', 'the control namespace (the installation key)'],
  ['AGENTRY_EGRESS_ALLOW', 'hosts every workspace may reach, JSON [{"host":"github.com"}]'],
  ['AGENTRY_EGRESS_PRIVATE_TARGETS', 'also loopback and private addresses (tests); never metadata'],
  ['AGENTRY_LOG_LEVEL', 'fatal, error, warn, info, debug, trace or silent'],
])}  More settings: docs/configuration.md#settings.

example:
  AGENTRY_STORE=kubernetes AGENTRY_HOST=0.0.0.0 agentry egress-proxy
`;

/** `agentry egress-proxy` as a command: no arguments. */
export const egressProxyCommand: CliCommand = {
  usage: () => USAGE,
  run: async (args) => {
    parseArgs({ args, options: {} });
    return runEgressProxyCommand(loadConfig());
  },
};

/**
 * The egress proxy with the configuration's allow list, its caches filled, listening on
 * AGENTRY_HOST:AGENTRY_EGRESS_PROXY_PORT (0: any free port); resolves with the bound port.
 */
export async function startEgressProxy(
  store: ResourceStore,
  config: Config,
  logger: Logger,
  registry: Registry,
  installationKey: InstallationKey,
): Promise<{ proxy: EgressProxy; port: number }> {
  const proxy = createEgressProxy({
    store,
    installationKey,
    logger,
    registry,
    allow: config.AGENTRY_EGRESS_ALLOW,
    allowPrivateTargets: config.AGENTRY_EGRESS_PRIVATE_TARGETS,
  });
  await proxy.start();
  const port = await listenOn(proxy.server, {
    host: config.AGENTRY_HOST,
    port: config.AGENTRY_EGRESS_PROXY_PORT,
    hostSetting: 'AGENTRY_HOST',
    portSetting: 'AGENTRY_EGRESS_PROXY_PORT',
  });
  return { proxy, port };
}

/** `agentry egress-proxy`: runs until SIGINT or SIGTERM, then drains and exits 0. */
export async function runEgressProxyCommand(config: Config): Promise<number> {
  const logger = createLogger({ level: config.AGENTRY_LOG_LEVEL, name: 'agentry-egress-proxy' });
  const stopRequested = new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  const store = await openStore(config);
  const registry = createMetricsRegistry();
  let ready = false;
  const health = await startHealthServer(config, registry, () => ready);
  const installationKey = await ensureInstallationKey(store, config.AGENTRY_NAMESPACE);
  const { proxy, port } = await startEgressProxy(store, config, logger, registry, installationKey);
  ready = true;
  logger.info({ port, metricsPort: config.AGENTRY_METRICS_PORT }, 'egress proxy running');
  await stopRequested;
  ready = false;
  await proxy.stop({ drainMs: DRAIN_MS });
  health.close();
  await store.close();
  return 0;
}
