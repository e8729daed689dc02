import http from 'node:http';
import https from 'node:https';

/**
 * Requests in flight at once per store: the operator's controllers' workers (16 agent computers, each
 * first reconcile up to 4 requests at once, and the others' few) queue for a connection beyond it.
 */
export const DEFAULT_MAX_CONNECTIONS = 32;

/**
 * An idle kept-alive connection is closed after this long: before kube-apiserver's own idle timeout
 * (90 s) can close it while a request is being written to it.
 */
const IDLE_CONNECTION_MS = 30_000;

/** What a connection is for: short requests share a bounded pool; a watch holds its connection for minutes. */
export type ConnectionUse = 'request' | 'watch';

/**
 * The connection pools of one store. Short requests reuse kept-alive connections, at most
 * `maxConnections` at once (a burst queues instead of opening a handshake per request); watches get
 * an unbounded pool of their own, so long-lived streams never take a request's socket.
 *
 * The agents carry no TLS material: each request brings the kubeconfig's (CA, client certificate and
 * key, servername, rejectUnauthorized) and Node keys pooled sockets by it, so a rotated certificate or
 * an exec plugin's new client certificate gets new connections, never a socket made with the old one.
 */
export class ConnectionPools {
  private readonly agents = new Map<string, http.Agent>();

  constructor(private readonly maxConnections: number) {}

  agent(protocol: string, use: ConnectionUse): http.Agent {
    const key = `${protocol}${use}`;
    const existing = this.agents.get(key);
    if (existing !== undefined) return existing;
    // A watch's connection is not kept: it ends when the watch does (or its caller aborts it).
    const options: http.AgentOptions =
      use === 'request'
        ? {
            keepAlive: true,
            maxSockets: this.maxConnections,
            maxFreeSockets: this.maxConnections,
            timeout: IDLE_CONNECTION_MS,
          }
        : { keepAlive: false };
    const agent = protocol === 'http:' ? new http.Agent(options) : new https.Agent(options);
    this.agents.set(key, agent);
    return agent;
  }

  /** Closes every connection, idle or in use (the store is closing). */
  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}
