// The `kubevirt` runtime (docs/architecture.md#runtimes): a workload (an AgentComputer's runner, a ContextLake's lake
// server) as a kubevirt.io/v1 VirtualMachine whose root disk is a DataVolume (kept across
// hibernation and redeploys), booted with cloud-init from a Secret, reached through a Service and
// fenced by a NetworkPolicy.
import { secretData } from '../../crds/index.js';
import type { OwnerReference, Secret } from '../../crds/index.js';
import { SecretType } from '../../crds/index.js';
import {
  NetworkPolicyType,
  ServiceType,
  VirtualMachineInstanceType,
  VirtualMachineType,
} from './kube-objects.js';
import { controllerReference, deleteControlled, ensureObject } from './ensure-object.js';
import { serviceEndpoint, serviceName } from './workload-names.js';
import { quantityValue } from './quantity.js';
import type { VirtualMachine } from './kube-objects.js';
import { namespaceOf, workloadNetworkPolicy, workloadService } from './cluster-objects.js';
import { placementFields } from './cluster-options.js';
import type { ClusterRuntimeOptions } from './cluster-options.js';
import { workloadCloudConfig } from './cloud-init.js';
import { programEnvironment, warmUpEnvironment } from './program-layout.js';
import { workloadLabels, workloadProgram } from './types.js';
import type { WorkloadContext, WorkloadObject, WorkloadObservation, WorkloadRuntime } from './types.js';
import { REDEPLOYING_ANNOTATION, observeVm, vmAddress } from './vm-observation.js';

/** How CDI fetches a registry disk image: its importer pod downloads it, or the node's kubelet pulls it. */
export type DiskPullMethod = 'pod' | 'node';

export interface KubevirtRuntimeOptions extends ClusterRuntimeOptions {
  /** Unset: `pod`, CDI's default. */
  diskPullMethod?: DiskPullMethod | undefined;
}
export { runnerCloudConfig, workloadCloudConfig } from './cloud-init.js';

/** Template annotation: a new value changes the template, and a running VM is cycled to pick it up. */
export const RESTARTED_AT_ANNOTATION = 'agentry.dev/restarted-at';
/** Test-only: copied from the AgentComputer to the VM, where the fake virt-controller fails on it. */
export const FAIL_LABEL = 'agentry_fail';

/**
 * The names of the objects made for one workload. An AgentComputer's VM is named after it; a
 * ContextLake's is `<name>-lake`, and its disk, cloud-init and Service follow, so the kinds never collide.
 */
export function kubevirtWorkloadNames(object: WorkloadObject): {
  vm: string;
  disk: string;
  cloudInit: string;
  service: string;
  policy: string;
} {
  const { name } = object.metadata;
  const program = workloadProgram(object);
  const vm = program.name === 'runner' ? name : `${name}-${program.name}`;
  return {
    vm,
    disk: `${vm}-disk`,
    cloudInit: `${vm}-cloud-init`,
    service: serviceName(name, program.name),
    policy: `${name}-${program.name}`,
  };
}

/**
 * The DataVolume source of an image: `pvc:<namespace>/<name>` clones a PVC, anything else is pulled
 * from its registry, by CDI's importer (`pod`) or by the node (`node`).
 */
export function diskSource(image: string, pullMethod: DiskPullMethod = 'pod'): Record<string, unknown> {
  const pvc = /^pvc:([a-z0-9-]+)\/([a-z0-9.-]+)$/.exec(image);
  if (pvc !== null) return { pvc: { namespace: pvc[1], name: pvc[2] } };
  const url = image.startsWith('docker://') ? image : `docker://${image}`;
  return { registry: { url, ...(pullMethod === 'node' ? { pullMethod } : {}) } };
}

/** Whether the VM is down (or not yet reported), and the restartedAt it was last started for. */
function vmState(vm: VirtualMachine): {
  stopped: boolean;
  startedFor: string;
  redeploying: string | undefined;
} {
  const printable = vm.status?.printableStatus;
  return {
    stopped: printable === undefined || printable === 'Stopped' || vm.spec.runStrategy === 'Halted',
    startedFor: vm.spec.template?.metadata?.annotations?.[RESTARTED_AT_ANNOTATION] ?? '',
    redeploying: vm.metadata.annotations?.[REDEPLOYING_ANNOTATION],
  };
}

/** What the VM's run strategy must be now; `redeploying` set while a redeploy keeps it halted. */
export function planRunStrategy(
  object: WorkloadObject,
  existing: VirtualMachine | undefined,
): { runStrategy: 'Always' | 'Halted'; redeploying?: string } {
  if (object.spec.operatingMode === 'Hibernated') return { runStrategy: 'Halted' };
  if (existing === undefined) return { runStrategy: 'Always' };
  const wanted = object.spec.restartedAt ?? '';
  const printable = existing.status?.printableStatus;
  const { stopped, startedFor, redeploying } = vmState(existing);
  if (redeploying !== undefined) {
    // Halted by us: wait for KubeVirt to report it down, then start it on the new template.
    const down = printable === undefined || printable === 'Stopped';
    return down ? { runStrategy: 'Always' } : { runStrategy: 'Halted', redeploying: wanted };
  }
  // KubeVirt keeps a running VM on its old template: stop it, then start it on the new one. A VM
  // that is down starts on the new template anyway.
  if (startedFor !== wanted && !stopped) return { runStrategy: 'Halted', redeploying: wanted };
  return { runStrategy: 'Always' };
}

export class KubevirtRuntime implements WorkloadRuntime {
  readonly name = 'kubevirt' as const;
  /** Every object apply makes has the resource as its controller (the VM owns its DataVolume and VMI). */
  readonly collectedByOwnerReferences = true;

  constructor(private readonly options: KubevirtRuntimeOptions) {}

  async apply(
    object: WorkloadObject,
    context: WorkloadContext,
    signal: AbortSignal,
  ): Promise<WorkloadObservation> {
    const owner = controllerReference(object);
    const program = workloadProgram(object);
    const names = kubevirtWorkloadNames(object);
    const namespace = namespaceOf(object);
    const { store } = this.options;
    this.logWrite(
      await ensureObject(store, SecretType, this.cloudInit(object, context, owner), { merge: 'replace' }),
    );
    this.logWrite(
      await ensureObject(store, ServiceType, workloadService(object, owner, names.service), {
        merge: 'deep',
      }),
    );
    const policy = workloadNetworkPolicy(object, owner, names.policy, this.options);
    this.logWrite(await ensureObject(store, NetworkPolicyType, policy, { merge: 'replace' }));
    // The VM starts the workload: not before the owner's finalizer is stored (WorkloadContext.finalizerStored).
    await context.finalizerStored;
    signal.throwIfAborted();
    const existing = await store.get(VirtualMachineType, namespace, names.vm);
    const desired = this.virtualMachine(object, owner, planRunStrategy(object, existing));
    const written = await ensureObject(store, VirtualMachineType, desired, {
      merge: 'deep',
      managedAnnotations: [REDEPLOYING_ANNOTATION],
      // The disk is imported once: a later image or size applies to no existing disk.
      owned: ({ spec }) => ({
        ...desired,
        spec: { ...desired.spec, dataVolumeTemplates: spec.dataVolumeTemplates },
      }),
    });
    this.logWrite(written);
    const endpoint = serviceEndpoint(names.service, namespace, program.port);
    // Its instance only while the VM runs: there is none before, and none once it is halted.
    const address =
      written.object.status?.printableStatus === 'Running'
        ? vmAddress(await store.get(VirtualMachineInstanceType, namespace, names.vm))
        : undefined;
    return observeVm(object, written.object, {
      endpoint,
      image: this.image(object),
      disk: names.disk,
      address,
    });
  }

  /** Owner references collect everything (KubeVirt makes the DataVolume the VM's); this is faster. */
  async remove(object: WorkloadObject): Promise<void> {
    const { uid } = object.metadata;
    if (uid === undefined) return;
    const { store } = this.options;
    const namespace = namespaceOf(object);
    const names = kubevirtWorkloadNames(object);
    await deleteControlled(store, VirtualMachineType, namespace, names.vm, uid);
    await deleteControlled(store, ServiceType, namespace, names.service, uid);
    await deleteControlled(store, NetworkPolicyType, namespace, names.policy, uid);
    await deleteControlled(store, SecretType, namespace, names.cloudInit, uid);
  }

  private logWrite(result: {
    object: { kind: string; metadata: { name: string; namespace?: string | undefined } };
    wrote: string;
  }): void {
    if (result.wrote === 'unchanged') return;
    const { kind, metadata } = result.object;
    this.options.logger.info(
      { kind, name: metadata.name, namespace: metadata.namespace },
      `${kind} ${result.wrote}`,
    );
  }

  private image(object: WorkloadObject): string {
    const lakeImage = workloadProgram(object).name === 'lake' ? this.options.lake?.image : undefined;
    return object.spec.resources?.image ?? lakeImage ?? this.options.defaultImage;
  }

  private cloudConfig(object: WorkloadObject, token: string): string {
    const program = workloadProgram(object);
    const cpu = object.spec.resources?.cpu ?? this.options.defaults.cpu;
    const disk = object.spec.resources?.disk ?? this.options.defaults.disk;
    return workloadCloudConfig(program, token, {
      ...programEnvironment(program, this.options.lake, { cpu, disk }),
      ...warmUpEnvironment(object),
    });
  }

  private cloudInit(object: WorkloadObject, context: WorkloadContext, owner: OwnerReference): Secret {
    return {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: kubevirtWorkloadNames(object).cloudInit,
        namespace: namespaceOf(object),
        labels: workloadLabels(object),
        ownerReferences: [owner],
      },
      type: 'Opaque',
      // Inline userData is capped at 2 KB and would put the token into the VM spec: a Secret does neither.
      data: secretData({ userdata: this.cloudConfig(object, context.token) }),
    };
  }

  private virtualMachine(
    object: WorkloadObject,
    owner: OwnerReference,
    plan: { runStrategy: 'Always' | 'Halted'; redeploying?: string },
  ): VirtualMachine {
    const names = kubevirtWorkloadNames(object);
    const fail = object.metadata.labels?.[FAIL_LABEL];
    const { restartedAt } = object.spec;
    return {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachine',
      metadata: {
        name: names.vm,
        namespace: namespaceOf(object),
        labels: { ...workloadLabels(object), ...(fail === undefined ? {} : { [FAIL_LABEL]: fail }) },
        ...(plan.redeploying === undefined
          ? {}
          : { annotations: { [REDEPLOYING_ANNOTATION]: plan.redeploying } }),
        ownerReferences: [owner],
      },
      spec: {
        runStrategy: plan.runStrategy,
        dataVolumeTemplates: [this.diskTemplate(object)],
        template: {
          metadata: {
            labels: { ...workloadLabels(object), 'kubevirt.io/domain': names.vm },
            ...(restartedAt === undefined ? {} : { annotations: { [RESTARTED_AT_ANNOTATION]: restartedAt } }),
          },
          spec: this.vmiSpec(object),
        },
      },
    };
  }

  /** The root disk, which KubeVirt creates once and keeps while the VM exists (hibernated too). */
  private diskTemplate(object: WorkloadObject): Record<string, unknown> {
    const { storageClassName, defaults } = this.options;
    return {
      metadata: { name: kubevirtWorkloadNames(object).disk, labels: workloadLabels(object) },
      spec: {
        // `storage`, not `pvc`: CDI fills access and volume modes from the class's StorageProfile.
        storage: {
          resources: { requests: { storage: object.spec.resources?.disk ?? defaults.disk } },
          ...(storageClassName === undefined ? {} : { storageClassName }),
        },
        source: diskSource(this.image(object), this.options.diskPullMethod),
      },
    };
  }

  private vmiSpec(object: WorkloadObject): Record<string, unknown> {
    const { defaults } = this.options;
    const names = kubevirtWorkloadNames(object);
    const cpu = quantityValue(object.spec.resources?.cpu ?? defaults.cpu);
    return {
      domain: {
        // Whole cores: a guest cannot have half a CPU.
        cpu: { cores: Number.isFinite(cpu) ? Math.max(1, Math.ceil(cpu)) : 1 },
        memory: { guest: object.spec.resources?.memory ?? defaults.memory },
        devices: {
          disks: [
            { name: 'rootdisk', disk: { bus: 'virtio' } },
            { name: 'cloudinitdisk', disk: { bus: 'virtio' } },
          ],
          interfaces: [{ name: 'default', masquerade: {} }],
        },
      },
      networks: [{ name: 'default', pod: {} }],
      volumes: [
        { name: 'rootdisk', dataVolume: { name: names.disk } },
        { name: 'cloudinitdisk', cloudInitNoCloud: { secretRef: { name: names.cloudInit } } },
      ],
      // TCP, as in the pod runtime: the runner's HTTP endpoints all require its token.
      readinessProbe: {
        tcpSocket: { port: workloadProgram(object).port },
        initialDelaySeconds: 10,
        periodSeconds: 5,
      },
      terminationGracePeriodSeconds: 30,
      ...placementFields(this.options.placement),
    };
  }
}
