import { Counter, Gauge, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import { registeredMetric } from '../../platform/metrics.js';

/** How a claim ended (the label of both metrics). */
export const ClaimOutcomes = {
  /** A ready member became the caller's workspace. */
  Claimed: 'claimed',
  /** No ready member matched: the caller starts cold (the pool is empty, off, or refilling). */
  Empty: 'empty',
  /** Ready members there were, but other claims got every one this claim tried: it starts cold. */
  Contended: 'contended',
} as const;
export type ClaimOutcome = (typeof ClaimOutcomes)[keyof typeof ClaimOutcomes];

const CLAIMS = 'agentry_workspace_pool_claims_total';
const DURATION = 'agentry_workspace_pool_claim_duration_seconds';
const labelNames = ['outcome'] as const;

/** The claim metrics of one registry (docs/operations.md#metrics lists them). */
export class ClaimMetrics {
  private readonly claims: Counter<'outcome'>;
  private readonly duration: Histogram<'outcome'>;

  constructor(registry: Registry) {
    this.claims =
      registeredMetric(registry, CLAIMS, Counter<'outcome'>) ??
      new Counter({
        name: CLAIMS,
        help: 'Warm-pool claims of POST /tasks (without workspaceId) and POST /agent-computers, by outcome',
        labelNames,
        registers: [registry],
      });
    this.duration =
      registeredMetric(registry, DURATION, Histogram<'outcome'>) ??
      new Histogram({
        name: DURATION,
        help: 'Time a warm-pool claim took (choosing a member and writing the claim), by outcome',
        labelNames,
        buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
        registers: [registry],
      });
    // Every outcome from zero, so a dashboard's ratio exists before the first empty or contended claim.
    for (const outcome of Object.values(ClaimOutcomes)) this.claims.inc({ outcome }, 0);
  }

  record(outcome: ClaimOutcome, seconds: number): void {
    this.claims.inc({ outcome });
    this.duration.observe({ outcome }, seconds);
  }
}

const RESERVATIONS = 'agentry_workspace_pool_reservations';

/** The claims this API process holds reserved ahead (reservations.ts), read at each scrape. */
export function registerReservationsGauge(registry: Registry, held: () => number): void {
  if (registeredMetric(registry, RESERVATIONS, Gauge) !== undefined) return;
  new Gauge({
    name: RESERVATIONS,
    help: 'Warm-pool members this API process holds reserved ahead for its next task claims (at most one per organization)',
    registers: [registry],
    collect() {
      this.set(held());
    },
  });
}
