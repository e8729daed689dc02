import {
  ContextLakeConditions,
  ContextLakeEventReasons,
  ContextLakeReasons,
  HIBERNATED_BY_ANNOTATION,
} from '../../crds/index.js';
import type { ContextLake, EventReason, ContextLakeStatus, VmStatus } from '../../crds/index.js';
import type { EventKind, EventRecorder } from '../../platform/events.js';
import type { LakePass } from './status.js';

interface LakeEvent {
  type: EventKind;
  reason: EventReason;
  message: string;
}

const readyOf = (status: ContextLakeStatus | undefined) =>
  status?.conditions?.find((c) => c.type === ContextLakeConditions.Ready);

/** The event of a vmStatus change, for the states a person is told about. */
const VM_EVENTS: Partial<Record<VmStatus, (after: ContextLake, pass: LakePass) => LakeEvent>> = {
  running: (_after, pass) => ({
    type: 'Normal',
    reason: ContextLakeEventReasons.LakeStarted,
    message: `the lake server in ${pass.workload?.sandboxId ?? 'its workload'} is running`,
  }),
  paused: (after) => {
    const idle = after.metadata.annotations?.[HIBERNATED_BY_ANNOTATION] === 'idle-timeout';
    const why = idle ? ' after its idle timeout' : '';
    return {
      type: 'Normal',
      reason: ContextLakeEventReasons.LakeHibernated,
      message: `the lake server is stopped${why}; its disk is kept`,
    };
  },
  error: (after) => ({
    type: 'Warning',
    reason: ContextLakeEventReasons.ProvisionFailed,
    message: readyOf(after.status)?.message ?? 'the lake cannot start',
  }),
};

function vmTransition(before: ContextLake, after: ContextLake, pass: LakePass): LakeEvent | undefined {
  const is = after.status?.vmStatus;
  if (is === undefined || is === before.status?.vmStatus) return undefined;
  return VM_EVENTS[is]?.(after, pass);
}

function readyTransition(before: ContextLake, after: ContextLake): LakeEvent | undefined {
  const was = readyOf(before.status);
  const is = readyOf(after.status);
  if (is === undefined) return undefined;
  const newGeneration = was?.status !== 'True' || was.observedGeneration !== is.observedGeneration;
  if (is.status === 'True' && newGeneration)
    return { type: 'Normal', reason: ContextLakeEventReasons.ConfigApplied, message: is.message };
  const { ConfigInvalid } = ContextLakeReasons;
  if (is.reason === ConfigInvalid && was?.reason !== ConfigInvalid)
    return { type: 'Warning', reason: ContextLakeEventReasons.ConfigInvalid, message: is.message };
  return undefined;
}

function datasetFailures(before: ContextLake, after: ContextLake): LakeEvent[] {
  return Object.entries(after.status?.datasets ?? {})
    .filter(
      ([name, dataset]) => dataset.status === 'error' && before.status?.datasets?.[name]?.status !== 'error',
    )
    .map(([name, dataset]): LakeEvent => ({
      type: 'Warning',
      reason: ContextLakeEventReasons.DatasetFailed,
      message: `dataset ${name}: ${dataset.error ?? 'loading failed'}`,
    }));
}

/**
 * Kubernetes Events for the transitions a person watching `kubectl describe contextlake` cares
 * about, each recorded once per transition (comparing the status before and after this pass):
 * LakeStarted, LakeHibernated, ProvisionFailed, ConfigApplied, ConfigInvalid, DatasetFailed.
 * Messages come from the status, which holds no credential values.
 */
export async function recordLakeTransitions(
  events: EventRecorder,
  before: ContextLake,
  after: ContextLake,
  pass: LakePass,
): Promise<void> {
  const happened = [
    vmTransition(before, after, pass),
    readyTransition(before, after),
    ...datasetFailures(before, after),
  ].filter((event) => event !== undefined);
  for (const event of happened) await events.record(after, event.type, event.reason, event.message);
}
