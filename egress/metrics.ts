import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import type { EgressDenial } from '../crds/egress.js';
import { registeredMetric } from '../platform/metrics.js';

export type DenialReason = EgressDenial['reason'];

/** How a connection through the proxy ended up: allowed, refused, or turned away before any check. */
export type ConnectionOutcome = 'allowed' | 'denied' | 'unauthenticated' | 'overloaded' | 'failed';

export interface EgressMetrics {
  denied(org: string, reason: DenialReason): void;
  connection(org: string, outcome: ConnectionOutcome): void;
  tunnels: Gauge;
}

/** The proxy's counters (docs/egress.md#refusals), made once per registry. */
export function egressMetrics(registry: Registry): EgressMetrics {
  const denied =
    registeredMetric(registry, 'agentry_egress_denied_total', Counter) ??
    new Counter({
      name: 'agentry_egress_denied_total',
      help: 'Connections the egress proxy refused, by organization and reason.',
      labelNames: ['org', 'reason'],
      registers: [registry],
    });
  const connections =
    registeredMetric(registry, 'agentry_egress_connections_total', Counter) ??
    new Counter({
      name: 'agentry_egress_connections_total',
      help: 'Connections asked of the egress proxy, by organization and outcome.',
      labelNames: ['org', 'outcome'],
      registers: [registry],
    });
  const tunnels =
    registeredMetric(registry, 'agentry_egress_open_connections', Gauge) ??
    new Gauge({
      name: 'agentry_egress_open_connections',
      help: 'Tunnels and forwarded requests open through the egress proxy now.',
      registers: [registry],
    });
  return {
    denied: (org, reason) => {
      denied.inc({ org, reason });
    },
    connection: (org, outcome) => {
      connections.inc({ org, outcome });
    },
    tunnels,
  };
}
