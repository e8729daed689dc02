// Where a phase's time goes: when each of its Pods was first seen created, Running and Ready, from a
// watch of the phase's namespace, set against the phase's first create and its workspaces' ready times.
import { PodType } from '../../operator/runtimes/kube-objects.js';
import type { Pod } from '../../operator/runtimes/kube-objects.js';
import { Informer } from '../../platform/store/informer.js';
import { createLogger } from '../../platform/log.js';
import type { KubernetesStore } from '../../platform/store/kubernetes.js';
import { seconds } from '../reconcile-throughput/phase.js';
import type { PhaseResult } from '../reconcile-throughput/phase.js';
import { percentile } from '../support/stats.js';

/** When this process first saw each Pod at a milestone (performance.now()). */
interface PodTimes {
  created: number;
  running?: number;
  ready?: number;
}

const isReady = (pod: Pod): boolean =>
  pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

export class PodTimeline {
  private readonly pods = new Map<string, PodTimes>();
  private readonly informer: Informer<Pod>;

  private constructor(store: KubernetesStore, namespace: string) {
    this.informer = new Informer(store, PodType, {
      logger: createLogger({ level: 'silent' }),
      namespace,
      onEvent: ({ type, object }) => {
        if (type !== 'DELETED') this.seen(object);
      },
    });
  }

  /** Watches the Pods of `namespace` (which may not exist yet) from now on. */
  static async watch(store: KubernetesStore, namespace: string): Promise<PodTimeline> {
    const timeline = new PodTimeline(store, namespace);
    await timeline.informer.start();
    return timeline;
  }

  async stop(): Promise<void> {
    await this.informer.stop();
  }

  /** One line: p50 / p95 / last of each milestone, in seconds from the phase's first create. */
  describe(label: string, phase: PhaseResult): string {
    const from = (pick: (times: PodTimes) => number | undefined): string => {
      const values = [...this.pods.values()]
        .map(pick)
        .filter((t) => t !== undefined)
        .map((t) => t - phase.startedAt)
        .sort((a, b) => a - b);
      return `${seconds(percentile(values, 50))} / ${seconds(percentile(values, 95))} / ${seconds(values.at(-1) ?? Number.NaN)}`;
    };
    return (
      `| ${label} | ${from((t) => t.created)} | ${from((t) => t.running)} | ${from((t) => t.ready)} | ` +
      `${seconds(phase.p50Ms)} / ${seconds(phase.p95Ms)} / ${seconds(phase.totalMs)} |`
    );
  }

  private seen(pod: Pod): void {
    const now = performance.now();
    const times = this.pods.get(pod.metadata.name) ?? { created: now };
    if (pod.status?.phase === 'Running') times.running ??= now;
    if (isReady(pod)) times.ready ??= now;
    this.pods.set(pod.metadata.name, times);
  }
}

export const TIMELINE_HEADER =
  '| phase (s from first create, p50 / p95 / last) | Pod created | Pod Running | Pod Ready | workspace ready |\n|---|---|---|---|---|';
