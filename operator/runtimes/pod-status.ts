// What a pod of the `pod` runtime says about its workload: ready, starting, or unable to start
// without a change to the spec or the cluster (a bad image, a crashing program, no node to take it).
import type { Pod } from './kube-objects.js';
import { ObservationReasons, RUNNER_PROGRAM } from './types.js';
import type { WorkloadContext, WorkloadObservation, WorkloadProgram } from './types.js';
type WaitingHint = (image: string, context: WorkloadContext, program: WorkloadProgram) => string;

const WAITING_HINTS: Record<string, WaitingHint> = {
  ErrImagePull: (image) => `the image ${image} could not be pulled; check spec.resources.image`,
  ImagePullBackOff: (image) => `the image ${image} could not be pulled; check spec.resources.image`,
  InvalidImageName: (image) => `${image} is not a valid image name; check spec.resources.image`,
  CrashLoopBackOff: (image, _context, program) =>
    `the ${program.noun} in ${image} keeps exiting; the image must have \`agentry\` on its PATH and run as a non-root user`,
  CreateContainerConfigError: (_image, context, program) =>
    `the container cannot be configured; the ${program.noun} token Secret ${context.tokenSecretName} may be missing`,
  CreateContainerError: (image) => `the container of ${image} cannot be created`,
  ErrImageNeverPull: (image) =>
    `the image ${image} is not on the node and its pull policy forbids pulling it; load it onto the node or allow pulls`,
  RunContainerError: (image, _context, program) =>
    `the ${program.noun} in ${image} cannot start; the image must have \`agentry\` on its PATH`,
};

const detail = (message: string | undefined): string =>
  message === undefined || message === '' ? '' : ` (${message.slice(0, 1000)})`;

type ContainerStatus = NonNullable<NonNullable<Pod['status']>['containerStatuses']>[number];

const imageOf = (pod: Pod, status: ContainerStatus): string =>
  pod.spec.containers.find((c) => c.name === status.name)?.image ?? status.image ?? 'unknown';

function containerError(pod: Pod, context: WorkloadContext, program: WorkloadProgram): string | undefined {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const status of statuses) {
    const reason = status.state?.waiting?.reason ?? '';
    const hint = WAITING_HINTS[reason];
    if (hint !== undefined) {
      return `Pod cannot start: ${reason} — ${hint(imageOf(pod, status), context, program)}${detail(status.state?.waiting?.message)}`;
    }
  }
  return undefined;
}

function schedulingError(pod: Pod): string | undefined {
  const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  if (scheduled?.status !== 'False' || scheduled.reason !== 'Unschedulable') return undefined;
  return `Pod cannot be scheduled: no node can take it; check spec.resources (cpu, memory, disk) against the cluster's capacity and that its disk can be bound${detail(scheduled.message)}`;
}

/** Why the pod cannot start without a change to the spec or the cluster; undefined while it may. */
const podProvisionError = (
  pod: Pod,
  context: WorkloadContext,
  program: WorkloadProgram = RUNNER_PROGRAM,
): string | undefined => containerError(pod, context, program) ?? schedulingError(pod);

/** The pod's own IP once it has one (previews reach its ports there, not through the Service). */
const podAddress = (pod: Pod): string | undefined => pod.status?.podIP;

/** What one pod of the current deployment says about the workload. */
export function observePod(
  pod: Pod,
  endpoint: string,
  context: WorkloadContext,
  program: WorkloadProgram = RUNNER_PROGRAM,
): WorkloadObservation {
  const base = { provisioned: true, sandboxId: pod.metadata.name, endpoint, address: podAddress(pod) };
  const provisionError = podProvisionError(pod, context, program);
  const running = pod.status?.phase === 'Running';
  const ready =
    running && pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
  if (provisionError !== undefined) {
    return {
      ...base,
      running,
      ready: false,
      provisionError,
      reason: ObservationReasons.ProvisionFailed,
      message: provisionError,
    };
  }
  if (ready)
    return {
      ...base,
      running,
      ready,
      reason: program.readyReason,
      message: `Pod ${pod.metadata.name} is ready`,
    };
  const message = running
    ? `Pod ${pod.metadata.name} is running; waiting for the ${program.noun} to listen on port ${program.port}`
    : `Pod ${pod.metadata.name} is ${pod.status?.phase ?? 'being created'}; waiting for it to run`;
  return {
    ...base,
    running,
    ready,
    reason: running ? ObservationReasons.Starting : ObservationReasons.Provisioning,
    message,
  };
}
