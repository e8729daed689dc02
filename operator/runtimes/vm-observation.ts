// What a kubevirt workload's VirtualMachine (and, while it runs, its instance) says about it
// (operator/runtimes/kubevirt.ts): running, ready, hibernated, a provision error a user must act on,
// and the address previews connect to.
import type { VirtualMachine, VirtualMachineInstance } from './kube-objects.js';
import { ObservationReasons, workloadProgram } from './types.js';
import type { WorkloadObject, WorkloadObservation } from './types.js';

/** VM annotation while a redeploy halts the VM: the restartedAt it is for. Removed once restarted. */
export const REDEPLOYING_ANNOTATION = 'agentry.dev/redeploying';

const VM_ERRORS: Record<string, (image: string, disk: string) => string> = {
  ErrorUnschedulable: () =>
    `no node can run it; check spec.resources (cpu, memory) against the cluster's capacity`,
  ErrImagePull: (image) => `the image ${image} could not be pulled; check spec.resources.image`,
  ImagePullBackOff: (image) => `the image ${image} could not be pulled; check spec.resources.image`,
  CrashLoopBackOff: () =>
    `its virt-launcher pod keeps crashing; check that the image boots and the nodes support virtualization`,
  DataVolumeError: (image, disk) =>
    `its disk ${disk} could not be imported from ${image}; check spec.resources.image and spec.resources.disk`,
  ErrorPvcNotFound: (_image, disk) => `its disk ${disk} is missing`,
  ErrorDataVolumeNotFound: (_image, disk) => `its disk ${disk} is missing`,
};

/** What KubeVirt said about a failure, for the end of a provision error. */
function conditionDetail(vm: VirtualMachine): { failure: string | undefined; detail: string } {
  const conditions = vm.status?.conditions ?? [];
  const failure = conditions.find((c) => c.type === 'Failure' && c.status === 'True');
  const notReady = conditions.find((c) => c.type === 'Ready' && c.status === 'False');
  const said = failure?.message ?? notReady?.message ?? '';
  return {
    failure: failure === undefined ? undefined : (failure.reason ?? 'Failure'),
    detail: said === '' ? '' : ` (${said.slice(0, 1000)})`,
  };
}

/** Why the VM cannot start without a change; undefined while it may. */
export function vmProvisionError(vm: VirtualMachine, image: string, disk: string): string | undefined {
  const printable = vm.status?.printableStatus ?? '';
  const { failure, detail } = conditionDetail(vm);
  const hint = VM_ERRORS[printable];
  if (hint !== undefined) return `VM cannot start: ${printable} — ${hint(image, disk)}${detail}`;
  if (failure !== undefined) return `VM cannot start: ${failure}${detail}`;
  return undefined;
}

function hibernation(
  base: Omit<WorkloadObservation, 'ready' | 'reason' | 'message'>,
  printable: string | undefined,
): WorkloadObservation {
  // KubeVirt says Stopping at once after Halted while the guest shuts down and still holds its CPU
  // and memory: only Stopped (or no VM status yet) is down.
  const running = printable !== undefined && printable !== 'Stopped';
  return !running
    ? {
        ...base,
        running,
        ready: false,
        reason: ObservationReasons.Hibernated,
        message: 'Hibernated: the VM is stopped, its disk is kept',
      }
    : {
        ...base,
        running,
        ready: false,
        reason: ObservationReasons.Hibernating,
        message: `Waiting for the VM to stop (it is ${printable})`,
      };
}

/**
 * The address a running VM's instance reports on its pod-network interface (`default`): with
 * masquerade binding, the virt-launcher Pod's IP, whose ports reach the guest's. Previews connect
 * there; the Service exposes only the program's port.
 */
export function vmAddress(instance: VirtualMachineInstance | undefined): string | undefined {
  const interfaces = instance?.status?.interfaces ?? [];
  const reported = (entry: (typeof interfaces)[number]): string | undefined =>
    entry.ipAddress ?? entry.ipAddresses?.[0];
  const primary = interfaces.find((entry) => entry.name === 'default');
  return (primary === undefined ? undefined : reported(primary)) ?? interfaces.map(reported).find(Boolean);
}

/** What every observation of the VM says: it exists, whether it runs, and where it is reached. */
function observedBase(
  vm: VirtualMachine,
  where: { endpoint: string; address?: string | undefined },
): Pick<WorkloadObservation, 'provisioned' | 'running' | 'sandboxId' | 'endpoint' | 'address'> {
  const running = vm.status?.printableStatus === 'Running';
  const address = running ? where.address : undefined;
  return { provisioned: true, running, sandboxId: vm.metadata.name, endpoint: where.endpoint, address };
}

/** What the VM (and, once it runs, its instance) says about the workload, given what apply asked of it. */
export function observeVm(
  object: WorkloadObject,
  vm: VirtualMachine,
  where: { endpoint: string; image: string; disk: string; address?: string | undefined },
): WorkloadObservation {
  const program = workloadProgram(object);
  const printable = vm.status?.printableStatus;
  const base = observedBase(vm, where);
  const { running } = base;
  const ready = running && vm.status?.ready === true;
  const state = printable ?? 'being created';
  if (object.spec.operatingMode === 'Hibernated') return hibernation(base, printable);
  if (vm.metadata.annotations?.[REDEPLOYING_ANNOTATION] !== undefined) {
    return {
      ...base,
      ready: false,
      reason: ObservationReasons.Redeploying,
      message: `Redeploying: waiting for the VM to stop (it is ${state})`,
    };
  }
  const provisionError = vmProvisionError(vm, where.image, where.disk);
  if (provisionError !== undefined) {
    return {
      ...base,
      ready: false,
      provisionError,
      reason: ObservationReasons.ProvisionFailed,
      message: provisionError,
    };
  }
  if (ready)
    return { ...base, ready, reason: program.readyReason, message: `VM ${vm.metadata.name} is ready` };
  const message = running
    ? `VM ${vm.metadata.name} is running; waiting for the ${program.noun} to listen on port ${program.port}`
    : `VM ${vm.metadata.name} is ${state}; waiting for it to run`;
  return {
    ...base,
    ready,
    reason: running ? ObservationReasons.Starting : ObservationReasons.Provisioning,
    message,
  };
}
