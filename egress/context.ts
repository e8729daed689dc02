import type { Logger } from '../platform/log.js';
import type { ConnectionLimits } from './connection-limits.js';
import type { DenialLedger } from './denial-ledger.js';
import type { DestinationPolicy } from './destination.js';
import type { EgressMetrics } from './metrics.js';
import type { PromptAccessCheck } from './prompt-access.js';

/** What every connection handler of the proxy shares. */
export interface ProxyContext {
  access: PromptAccessCheck;
  ledger: DenialLedger;
  metrics: EgressMetrics;
  policy: DestinationPolicy;
  limits: ConnectionLimits;
  logger: Logger;
  /** Idle tunnels and requests are closed after this long without a byte either way. */
  idleTimeoutMs: number;
}

/** The one-line text body of a refusal (403, 407, 429), as a client's error message shows it. */
export const refusalLine = (host: string, port: number, reason: string): string =>
  `agentry egress proxy: ${host}:${port} refused (${reason})\n`;
