import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import type { Registry } from 'prom-client';
import type { EgressRule } from '../crds/egress.js';
import { EventRecorder } from '../platform/events.js';
import type { InstallationKey } from '../platform/installation-key.js';
import type { Logger } from '../platform/log.js';
import { PromptTokens } from '../platform/model-gateway/token.js';
import type { HostLookup } from '../platform/outbound-targets.js';
import type { ResourceStore } from '../platform/store/types.js';
import { EgressCaches } from './caches.js';
import { ConnectionLimits, DEFAULT_CONNECTION_LIMITS } from './connection-limits.js';
import type { ConnectionLimitSettings } from './connection-limits.js';
import type { ProxyContext } from './context.js';
import { DenialLedger } from './denial-ledger.js';
import { handleForward } from './forward.js';
import { egressMetrics } from './metrics.js';
import { PromptAccessCheck } from './prompt-access.js';
import { handleConnect } from './tunnel.js';

export interface EgressProxyOptions {
  store: ResourceStore;
  installationKey: InstallationKey;
  logger: Logger;
  registry: Registry;
  /** The installation's allow list (AGENTRY_EGRESS_ALLOW). */
  allow: readonly EgressRule[];
  /** AGENTRY_EGRESS_PRIVATE_TARGETS: loopback and private addresses too (metadata never). */
  allowPrivateTargets: boolean;
  /** Default 5 minutes. */
  idleTimeoutMs?: number;
  limits?: ConnectionLimitSettings;
  /** Tests replace DNS with this. */
  lookup?: HostLookup;
}

/** The egress proxy, not yet listening: `server` is an http.Server (listen it with listenOn). */
export interface EgressProxy {
  server: Server;
  /** Fills the caches; connections are checked against them from then on. */
  start(): Promise<void>;
  /**
   * Stops accepting, lets open tunnels and requests finish for up to `drainMs` (default 0), closes
   * what is left, writes pending denials, stops the caches.
   */
  stop(options?: { drainMs?: number }): Promise<void>;
}

const DEFAULT_IDLE_TIMEOUT_MS = 5 * 60_000;

/** Resolves once `done()` holds (checked every 100 ms) or after `ms`. */
async function until(done: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await delay(100);
}

/**
 * An HTTP forward proxy for workspaces (docs/egress.md): CONNECT tunnels and absolute-form plain
 * HTTP, each authorized by its prompt token and checked against the allow lists and the address
 * classification before a single byte goes out.
 */
export function createEgressProxy(options: EgressProxyOptions): EgressProxy {
  const logger = options.logger;
  const caches = new EgressCaches(options.store, logger);
  const ledger = new DenialLedger(
    options.store,
    new EventRecorder(options.store, { component: 'agentry-egress-proxy', logger }),
    logger,
  );
  const context: ProxyContext = {
    access: new PromptAccessCheck(new PromptTokens(options.installationKey), caches, options.allow),
    ledger,
    metrics: egressMetrics(options.registry),
    policy: { allowPrivateTargets: options.allowPrivateTargets, lookup: options.lookup },
    limits: new ConnectionLimits(options.limits ?? DEFAULT_CONNECTION_LIMITS),
    logger,
    idleTimeoutMs: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
  };
  const server = createServer((req, res) => {
    handleForward(context, req, res);
  });
  server.on('connect', (req, socket, head) => {
    handleConnect(context, req, socket, head);
  });
  // Every client socket, tunnels included (a CONNECT socket leaves the server's own bookkeeping).
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return {
    server,
    start: () => caches.start(),
    async stop({ drainMs = 0 } = {}) {
      const closed = new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
      server.closeIdleConnections();
      await until(() => sockets.size === 0, drainMs);
      for (const socket of sockets) socket.destroy();
      await closed;
      await ledger.flushAll();
      await caches.stop();
    },
  };
}
