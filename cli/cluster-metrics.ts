import cluster from 'node:cluster';
import type { Worker } from 'node:cluster';
import { AggregatorRegistry, Registry } from 'prom-client';
import { z } from 'zod';

// /metrics of `agentry api` with several workers: whichever worker a scrape reaches asks the
// primary, which gathers every worker's registry (prom-client's AggregatorRegistry: counters and
// histograms summed, gauges by their aggregator) and adds its own (worker restarts). One view,
// whatever worker answers.

const REQUEST = 'agentry:api-metrics-request';
const ANSWER = 'agentry:api-metrics';
/** Longer than the aggregator's own 5 s wait for a worker that does not answer. */
const ANSWER_TIMEOUT_MS = 10_000;

const RequestSchema = z.object({ type: z.literal(REQUEST), id: z.number().int() });
const AnswerSchema = z.object({
  type: z.literal(ANSWER),
  id: z.number().int(),
  text: z.string().optional(),
  error: z.string().optional(),
});

interface Pending {
  resolve: (text: string) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * A worker's registry: its metrics are recorded here as in any registry, and `metrics()` answers
 * the cluster-wide view the primary assembles.
 */
export class ClusterWideRegistry extends Registry {
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  constructor() {
    super();
    // Constructing one makes prom-client answer the primary's requests for this worker's metrics.
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([this]);
    process.on('message', (message: unknown) => {
      const answer = AnswerSchema.safeParse(message);
      if (!answer.success) return;
      const waiting = this.pending.get(answer.data.id);
      if (waiting === undefined) return;
      this.pending.delete(answer.data.id);
      clearTimeout(waiting.timer);
      if (answer.data.text === undefined)
        waiting.reject(new Error(`cluster metrics: ${answer.data.error ?? 'no answer'}`));
      else waiting.resolve(answer.data.text);
    });
  }

  override metrics(): Promise<string> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error('cluster metrics: the primary did not answer'));
      }, ANSWER_TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer });
      process.send?.({ type: REQUEST, id });
    });
  }
}

/** In the primary: answers workers' requests with every worker's metrics plus `own`. */
export function serveClusterMetrics(own: Registry): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker: Worker, message: unknown) => {
    const request = RequestSchema.safeParse(message);
    if (!request.success) return;
    const { id } = request.data;
    Promise.all([aggregator.clusterMetrics(), own.metrics()]).then(
      ([workers, primary]) => {
        if (worker.isConnected()) worker.send({ type: ANSWER, id, text: `${workers}${primary}` });
      },
      (err: unknown) => {
        const error = err instanceof Error ? err.message : 'failed';
        if (worker.isConnected()) worker.send({ type: ANSWER, id, error });
      },
    );
  });
}
