// The `pod` runtime (docs/architecture.md#runtimes): a workload (an AgentComputer's runner, a ContextLake's lake
// server) as a Pod, a PVC for its disk, a Service and a NetworkPolicy. Hibernate deletes the Pod and
// keeps the rest; a redeploy is a new Pod on the same disk.
import type { OwnerReference } from '../../crds/index.js';
import { isStoreError } from '../../platform/store/types.js';
import { PersistentVolumeClaimType, PodType, NetworkPolicyType, ServiceType } from './kube-objects.js';
import {
  controllerReference,
  deepMerge,
  deleteControlled,
  deleteIfOwned,
  ensureObject,
} from './ensure-object.js';
import { serviceEndpoint, serviceName, shortHash } from './workload-names.js';
import { quantityValue } from './quantity.js';
import type { PersistentVolumeClaim, Pod } from './kube-objects.js';
import { namespaceOf, workloadNetworkPolicy, workloadService } from './cluster-objects.js';
import { placementFields } from './cluster-options.js';
import type { ClusterRuntimeOptions, WorkloadDefaults } from './cluster-options.js';
import type { Caches } from '../controller/caches.js';
import { podDiskMounts, programEnvironment, warmUpEnvironment } from './program-layout.js';
import { observePod } from './pod-status.js';
import { ObservationReasons, workloadLabels, workloadProgram } from './types.js';
import type {
  WorkloadContext,
  WorkloadObject,
  WorkloadObservation,
  WorkloadProgram,
  WorkloadRuntime,
} from './types.js';

export type { WorkloadDefaults } from './cluster-options.js';
export type PodRuntimeOptions = ClusterRuntimeOptions;

export { RUNNER_STATE_DIR, WORKDIR } from './program-layout.js';
/** Pod annotation: digest of the pod spec, so a changed image or size replaces the pod. */
export const TEMPLATE_HASH_ANNOTATION = 'agentry.dev/template-hash';
/** The uid and gid the program runs as, and the group that owns the disk. */
const WORKLOAD_UID = 1000;

/**
 * The names of the objects made for one workload: `<name>-runner...` for an AgentComputer,
 * `<name>-lake...` for a ContextLake, so the two kinds never collide on a name.
 */
export function podWorkloadNames(object: WorkloadObject): {
  disk: string;
  service: string;
  policy: string;
  pod: string;
} {
  const { name } = object.metadata;
  const program = workloadProgram(object);
  return {
    disk: program.name === 'runner' ? `${name}-disk` : `${name}-${program.name}-disk`,
    service: serviceName(name, program.name),
    policy: `${name}-${program.name}`,
    // A redeploy (new restartedAt) makes a new name, so the old pod and the new never share one.
    pod: `${name}-${program.name}-${shortHash(object.spec.restartedAt ?? 'initial')}`,
  };
}

/** A pod that must go before the current one may exist: another generation, changed, or finished. */
const isStale = (pod: Pod, desired: Pod): boolean =>
  pod.metadata.name !== desired.metadata.name ||
  pod.metadata.deletionTimestamp !== undefined ||
  pod.metadata.annotations?.[TEMPLATE_HASH_ANNOTATION] !==
    desired.metadata.annotations?.[TEMPLATE_HASH_ANNOTATION] ||
  pod.status?.phase === 'Failed' ||
  pod.status?.phase === 'Succeeded';

export class PodRuntime implements WorkloadRuntime {
  readonly name = 'pod' as const;
  /** Every object apply makes has the resource as its controller. */
  readonly collectedByOwnerReferences = true;

  constructor(private readonly options: PodRuntimeOptions) {}

  async apply(
    object: WorkloadObject,
    context: WorkloadContext,
    signal: AbortSignal,
  ): Promise<WorkloadObservation> {
    const owner = controllerReference(object);
    const program = workloadProgram(object);
    const names = podWorkloadNames(object);
    const { cache } = context;
    const policy = workloadNetworkPolicy(object, owner, names.policy, this.options);
    // Independent of one another, so at once: a first reconcile waits one round trip, not four. The
    // pod comes after all of them: its disk and token must exist, it never runs unfenced, and never
    // before its owner's finalizer is stored (WorkloadContext.finalizerStored).
    await Promise.all([
      this.ensureDisk(object, owner, cache),
      this.ensure(program, 'service', () =>
        ensureObject(this.options.store, ServiceType, workloadService(object, owner, names.service), {
          merge: 'deep',
          cache,
        }),
      ),
      this.ensure(program, 'policy', () =>
        ensureObject(this.options.store, NetworkPolicyType, policy, { merge: 'replace', cache }),
      ),
      context.tokenStored,
      context.finalizerStored,
    ]);
    signal.throwIfAborted();
    const endpoint = serviceEndpoint(names.service, namespaceOf(object), program.port);
    const pods = await this.ownedPods(object, owner.uid, cache);
    if (object.spec.operatingMode === 'Hibernated') return this.hibernate(pods, endpoint);
    return this.run(object, context, owner, pods, endpoint);
  }

  /** Owner references collect everything too; deleting here stops the program without waiting for GC. */
  async remove(object: WorkloadObject): Promise<void> {
    const { uid } = object.metadata;
    if (uid === undefined) return;
    const { store } = this.options;
    const namespace = namespaceOf(object);
    const names = podWorkloadNames(object);
    for (const pod of await this.ownedPods(object, uid)) await deleteIfOwned(store, PodType, pod);
    await deleteControlled(store, ServiceType, namespace, names.service, uid);
    await deleteControlled(store, NetworkPolicyType, namespace, names.policy, uid);
    await deleteControlled(store, PersistentVolumeClaimType, namespace, names.disk, uid);
  }

  private async run(
    object: WorkloadObject,
    context: WorkloadContext,
    owner: OwnerReference,
    pods: Pod[],
    endpoint: string,
  ): Promise<WorkloadObservation> {
    const desired = this.pod(object, context, owner);
    const stale = pods.filter((pod) => isStale(pod, desired));
    if (stale.length > 0) {
      // The disk is ReadWriteOnce and the program keeps its state on it: one pod at a time, so the
      // new pod waits until every old one is gone.
      await this.deletePods(stale);
      const names = stale.map((pod) => pod.metadata.name).join(', ');
      return {
        provisioned: true,
        running: false,
        ready: false,
        endpoint,
        reason: ObservationReasons.Redeploying,
        message: `Waiting for pod ${names} to stop before starting ${desired.metadata.name}`,
      };
    }
    const current =
      pods.find((pod) => pod.metadata.name === desired.metadata.name) ??
      (await this.createPod(desired, context.cache));
    return observePod(current, endpoint, context, workloadProgram(object));
  }

  private async hibernate(pods: Pod[], endpoint: string): Promise<WorkloadObservation> {
    await this.deletePods(pods);
    const base = { provisioned: true, running: false, ready: false, endpoint };
    if (pods.length === 0) {
      return {
        ...base,
        reason: ObservationReasons.Hibernated,
        message: 'Hibernated: the pod is stopped, its disk is kept',
      };
    }
    const names = pods.map((pod) => pod.metadata.name).join(', ');
    return { ...base, reason: ObservationReasons.Hibernating, message: `Waiting for pod ${names} to stop` };
  }

  private async deletePods(pods: Pod[]): Promise<void> {
    for (const pod of pods) {
      if (pod.metadata.deletionTimestamp !== undefined) continue;
      this.options.logger.info({ pod: pod.metadata.name, namespace: pod.metadata.namespace }, 'deleting pod');
      await deleteIfOwned(this.options.store, PodType, pod);
    }
  }

  private async createPod(desired: Pod, cache?: Caches): Promise<Pod> {
    const { namespace, name } = desired.metadata;
    this.options.logger.info({ pod: name, namespace }, 'creating pod');
    try {
      const created = await this.options.store.create(PodType, desired);
      cache?.observe(PodType, created);
      return created;
    } catch (err) {
      // A cache a watch event behind missed the pod this very pod spec made: carry on with it.
      const existing = isStoreError(err, 'AlreadyExists')
        ? await this.options.store.get(PodType, namespace, name)
        : undefined;
      if (existing !== undefined && !isStale(existing, desired)) return existing;
      throw new Error(`creating pod ${namespace ?? ''}/${name}`, { cause: err });
    }
  }

  /** The pods `uid` controls, from the operator's Pod cache when there is one. */
  private async ownedPods(object: WorkloadObject, uid: string, cache?: Caches): Promise<Pod[]> {
    const namespace = namespaceOf(object);
    const { ownerLabel } = workloadProgram(object);
    const name = object.metadata.name;
    const pods =
      cache === undefined
        ? (await this.options.store.list(PodType, { namespace, labelSelector: `${ownerLabel}=${name}` }))
            .items
        : cache.list(PodType, namespace).filter((pod) => pod.metadata.labels?.[ownerLabel] === name);
    return pods.filter((pod) =>
      pod.metadata.ownerReferences?.some((ref) => ref.controller === true && ref.uid === uid),
    );
  }

  private async ensure(
    program: WorkloadProgram,
    what: string,
    write: () => Promise<{ wrote: string }>,
  ): Promise<void> {
    const { wrote } = await write();
    if (wrote !== 'unchanged')
      this.options.logger.info({ object: what, wrote }, `${program.noun} ${what} ${wrote}`);
  }

  private resources(object: WorkloadObject): WorkloadDefaults & { image: string } {
    const { defaults, defaultImage, lake } = this.options;
    const r = object.spec.resources;
    const programImage = workloadProgram(object).name === 'lake' ? lake?.image : undefined;
    return {
      cpu: r?.cpu ?? defaults.cpu,
      memory: r?.memory ?? defaults.memory,
      disk: r?.disk ?? defaults.disk,
      image: r?.image ?? programImage ?? defaultImage,
    };
  }

  private disk(object: WorkloadObject, owner: OwnerReference): PersistentVolumeClaim {
    const { storageClassName } = this.options;
    return {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: podWorkloadNames(object).disk,
        namespace: namespaceOf(object),
        labels: workloadLabels(object),
        ownerReferences: [owner],
      },
      spec: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: this.resources(object).disk } },
        ...(storageClassName === undefined ? {} : { storageClassName }),
      },
    };
  }

  /** The claim with our labels and owner; its spec is immutable but for the size, grown apart. */
  private async ensureDisk(object: WorkloadObject, owner: OwnerReference, cache?: Caches): Promise<void> {
    const desired = this.disk(object, owner);
    const written = await ensureObject(this.options.store, PersistentVolumeClaimType, desired, {
      merge: 'deep',
      owned: () => ({ ...desired, spec: {} }),
      cache,
    });
    if (written.wrote === 'created')
      this.options.logger.info({ pvc: desired.metadata.name }, 'workload disk created');
    else await this.growDisk(written.object, this.resources(object).disk);
  }

  /** A claim never shrinks; growing it needs a storage class that allows expansion. */
  private async growDisk(pvc: PersistentVolumeClaim, wanted: string): Promise<void> {
    const current = pvc.spec.resources?.requests?.storage ?? '0';
    if (!(quantityValue(wanted) > quantityValue(current))) return;
    const { store, logger } = this.options;
    const log = { pvc: pvc.metadata.name, from: current, to: wanted };
    const grown = deepMerge(pvc, { spec: { resources: { requests: { storage: wanted } } } });
    try {
      await store.replace(PersistentVolumeClaimType, PersistentVolumeClaimType.schema.parse(grown));
      logger.info(log, 'workload disk grown');
    } catch (err) {
      // Refused (a static volume, a class without expansion): the workload runs on the disk it has.
      if (!isStoreError(err, 'Forbidden') && !isStoreError(err, 'Invalid')) {
        throw new Error(`growing PersistentVolumeClaim ${pvc.metadata.name} to ${wanted}`, { cause: err });
      }
      logger.warn({ ...log, err }, 'workload disk cannot grow');
    }
  }

  private pod(object: WorkloadObject, context: WorkloadContext, owner: OwnerReference): Pod {
    const resources = this.resources(object);
    const { cpu, memory, image } = resources;
    const program = workloadProgram(object);
    const names = podWorkloadNames(object);
    const disk = podDiskMounts(program);
    const env = Object.entries({
      ...programEnvironment(program, this.options.lake, resources),
      ...warmUpEnvironment(object),
    }).map(([name, value]) => ({ name, value }));
    const spec = {
      automountServiceAccountToken: false,
      // Service environment variables would list the namespace's other services to the workload.
      enableServiceLinks: false,
      restartPolicy: 'Always',
      securityContext: {
        runAsNonRoot: true,
        runAsUser: WORKLOAD_UID,
        runAsGroup: WORKLOAD_UID,
        fsGroup: WORKLOAD_UID,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: [
        {
          name: program.name,
          image,
          command: ['agentry', program.name],
          ports: [{ name: program.name, containerPort: program.port, protocol: 'TCP' }],
          env: [
            // From the Secret by reference: the token never appears in the pod spec.
            {
              name: `${program.envPrefix}TOKEN`,
              valueFrom: { secretKeyRef: { name: context.tokenSecretName, key: 'token' } },
            },
            ...env,
          ],
          volumeMounts: disk.mounts,
          // TCP, not HTTP: the program requires its token on every request and an httpGet probe can
          // only send headers written into the pod spec. The operator checks /healthz with the token.
          readinessProbe: { tcpSocket: { port: program.port }, periodSeconds: 5, failureThreshold: 3 },
          // Limits equal requests: a workload gets what it asked for, no more (Guaranteed QoS).
          resources: { requests: { cpu, memory }, limits: { cpu, memory } },
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
        },
      ],
      volumes: [{ name: disk.volume, persistentVolumeClaim: { claimName: names.disk } }],
      ...placementFields(this.options.placement),
    };
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: names.pod,
        namespace: namespaceOf(object),
        labels: workloadLabels(object),
        annotations: {
          [TEMPLATE_HASH_ANNOTATION]: shortHash(JSON.stringify(spec), 16),
          ...(object.spec.restartedAt === undefined
            ? {}
            : { 'agentry.dev/restarted-at': object.spec.restartedAt }),
        },
        ownerReferences: [owner],
      },
      spec,
    };
  }
}
