// The asides that explain the figures: one status write on a quiet store, the raw POST capacity of the
// receivers, and the webhooks' state at the end.
import { Agent } from 'node:http';
import { TaskType, WebhookType } from '../../crds/index.js';
import { ms, perSecond as rate } from '../support/format.js';
import { summarize } from '../support/stats.js';
import type { Summary } from '../support/stats.js';
import { NS, PER_WEBHOOK_CONCURRENCY } from './config.js';
import type { DeliveryRun } from './deliveries.js';
import { storeOf } from './environment.js';
import { floor } from './floor.js';
import type { Phase } from './phases.js';
import { newTask } from './sample-task.js';

/** What one status write costs the embedded store here, alone: the bound on every write below. */
export async function storeWriteAside(count: number): Promise<Summary> {
  const store = storeOf();
  let task = await store.create(TaskType, newTask('store-probe'));
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    task = await store.replaceStatus(
      TaskType,
      { ...task, status: { status: 'running', observedGeneration: i + 1 } },
      { resourceVersion: task.metadata.resourceVersion },
    );
    samples.push(performance.now() - start);
  }
  await store.delete(TaskType, NS, 'store-probe');
  return summarize(samples);
}

/** Every webhook still active, with no failures recorded. */
export async function reportWebhooks(): Promise<void> {
  const { items } = await storeOf().list(WebhookType, { namespace: NS });
  const states = items.map(
    (w) =>
      `${w.metadata.name} active=${String(w.status?.isActive ?? true)} failureCount=${w.status?.failureCount ?? 0}` +
      (w.status?.lastError === undefined ? '' : ` lastError=${JSON.stringify(w.status.lastError)}`),
  );
  console.log(`webhooks at the end: ${states.join('; ')}`);
}

/**
 * The unpaced run's requests all released at once, at 1, 4 and 16 in flight per webhook on new
 * connections, then 4 on keep-alive ones; each printed. The run at 4 is the second.
 */
export async function capacityRuns(fast: Phase): Promise<{ label: string; run: DeliveryRun }[]> {
  const burst = fast.run.timed.map((t) => ({ id: t.id, webhook: t.webhook, releaseMs: 0 }));
  const capacity: { label: string; run: DeliveryRun }[] = [];
  for (const concurrency of [1, PER_WEBHOOK_CONCURRENCY, 16]) {
    const label = `floor, all at once, ${concurrency} per webhook, new connection each`;
    capacity.push({ label, run: await floor(label, burst, fast.requests, concurrency, false) });
  }
  const keepAlive = new Agent({ keepAlive: true, maxSockets: PER_WEBHOOK_CONCURRENCY });
  try {
    const label = `floor, all at once, ${PER_WEBHOOK_CONCURRENCY} per webhook, keep-alive`;
    capacity.push({
      label,
      run: await floor(label, burst, fast.requests, PER_WEBHOOK_CONCURRENCY, keepAlive),
    });
  } finally {
    keepAlive.destroy();
  }
  for (const { label, run } of capacity)
    console.log(`${label}: ${rate(run.timed.length, run.spanMs)} (${run.timed.length} in ${ms(run.spanMs)})`);
  return capacity;
}
