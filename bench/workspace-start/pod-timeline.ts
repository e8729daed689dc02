// Why a start on the real node takes what it does: the workspace Pod's own timestamps (the API
// server's, one-second resolution) relative to the task's POST.
import { z } from 'zod';
import { PodType } from '../../operator/runtimes/kube-objects.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { wallMs } from '../support/child.js';

const PodTimesSchema = z.object({
  metadata: z.object({ creationTimestamp: z.string() }),
  status: z.object({
    conditions: z.array(z.object({ type: z.string(), lastTransitionTime: z.string() })).default([]),
    containerStatuses: z
      .array(
        z.object({
          name: z.string(),
          state: z.object({ running: z.object({ startedAt: z.string() }).optional() }).optional(),
        }),
      )
      .default([]),
  }),
});

/** "Pod created +0.4 s, PodScheduled +1.0 s, …, read +7.5 s" for the workspace's live Pod, in time order; `postedAt` is a wallMs(). */
export async function podTimeline(
  store: ResourceStore,
  namespace: string,
  workspaceId: string,
  postedAt: number,
): Promise<string> {
  const { items } = await store.list(PodType, {
    namespace,
    labelSelector: `agentry.dev/agent-computer=${workspaceId}`,
  });
  const live = items.find((pod) => pod.metadata.deletionTimestamp === undefined);
  if (live === undefined) return `no Pod of workspace ${workspaceId}`;
  const pod = PodTimesSchema.parse(live);
  const marks: [string, string][] = [
    ['Pod created', pod.metadata.creationTimestamp],
    ...pod.status.containerStatuses.flatMap(({ name, state }): [string, string][] =>
      state?.running === undefined ? [] : [[`container ${name} started`, state.running.startedAt]],
    ),
    ...pod.status.conditions.map(({ type, lastTransitionTime }): [string, string] => [
      type,
      lastTransitionTime,
    ]),
    ['read', new Date(wallMs()).toISOString()],
  ];
  return marks
    .map(([what, at]) => ({ what, seconds: (Date.parse(at) - postedAt) / 1000 }))
    .sort((a, b) => a.seconds - b.seconds)
    .map(({ what, seconds }) => `${what} ${seconds >= 0 ? '+' : '−'}${Math.abs(seconds).toFixed(1)} s`)
    .join(', ');
}
