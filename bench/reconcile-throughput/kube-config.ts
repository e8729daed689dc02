// Clients: a KubeConfig that counts requests and, with BENCH_KEEPALIVE=1, reuses connections.
import https from 'node:https';
import tls from 'node:tls';
import { KubeConfig } from '@kubernetes/client-node';
import type { RequestContext } from '@kubernetes/client-node';

/** TLS connections opened by this process (every client, every phase): https agents call tls.connect. */
let sockets = 0;
tls.connect = new Proxy(tls.connect, {
  apply(target, thisArg, args): unknown {
    sockets++;
    return Reflect.apply(target, thisArg, args);
  },
});

/**
 * client-node makes a new https.Agent per request (KubeConfig.createAgent), and the Kubernetes
 * store's transport takes the agent from applyToHTTPSOptions: without keep-alive, every request is
 * a new TCP connection and TLS handshake. This subclass counts requests and can swap in one agent.
 */
export class BenchKubeConfig extends KubeConfig {
  requests = 0;
  private agent: https.Agent | undefined;

  constructor(
    file: string,
    private readonly keepAlive: boolean,
  ) {
    super();
    this.loadFromFile(file);
  }

  /** The Kubernetes store's path (KubeConfigTransport). */
  override async applyToHTTPSOptions(opts: https.RequestOptions): Promise<void> {
    await super.applyToHTTPSOptions(opts);
    this.requests++;
    if (this.keepAlive) opts.agent = await this.sharedAgent();
  }

  /** client-node's generated APIs' path. */
  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    this.requests++;
    if (this.keepAlive) context.setAgent(await this.sharedAgent());
  }

  private async sharedAgent(): Promise<https.Agent> {
    if (this.agent === undefined) {
      const tls: https.RequestOptions = {};
      await super.applyToHTTPSOptions(tls);
      this.agent = new https.Agent({ keepAlive: true, ca: tls.ca, cert: tls.cert, key: tls.key });
    }
    return this.agent;
  }
}

/** TLS connections this process has opened so far. */
export const openedSockets = (): number => sockets;
