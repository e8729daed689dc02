// The `pod` runtime (DESIGN.md §3): an AgentComputer as a Pod, a PVC for /code, a Service and a
// NetworkPolicy. Hibernate deletes the Pod and keeps the rest; a redeploy is a new Pod on the same disk.
import type { AgentComputer, OwnerReference } from '../../crds/index.js';
import { isStoreError } from '../../platform/store/types.js';
import {
  PersistentVolumeClaimType,
  PodType,
  NetworkPolicyType,
  ServiceType,
  controllerReference,
  deepMerge,
  deleteControlled,
  deleteIfOwned,
  ensureObject,
  quantityValue,
  serviceEndpoint,
  serviceName,
  shortHash,
} from './kube-types.js';
import type { PersistentVolumeClaim, Pod, Service } from './kube-types.js';
import { runnerNetworkPolicy } from './network-policy.js';
import type { ClusterRuntimeOptions, WorkloadDefaults } from './cluster-options.js';
import { RUNNER_PORT, workloadLabels } from './types.js';
import type { WorkloadContext, WorkloadObservation, WorkloadRuntime } from './types.js';

export type { WorkloadDefaults } from './cluster-options.js';
export type PodRuntimeOptions = ClusterRuntimeOptions;

/** Where the disk is mounted, the runner's working directory. */
export const WORKDIR = '/code';
/** Where the runner keeps task event logs and prompt records (AGENTRY_RUNNER_STATE_DIR). */
export const RUNNER_STATE_DIR = '/var/lib/agentry-runner';
/** Pod annotation: digest of the pod spec, so a changed image or size replaces the pod. */
export const TEMPLATE_HASH_ANNOTATION = 'agentry.dev/template-hash';
/** The uid and gid the runner runs as, and the group that owns the disk. */
const RUNNER_UID = 1000;

/** The names of the objects made for one AgentComputer. */
export function podWorkloadNames(ac: AgentComputer): {
  disk: string;
  service: string;
  policy: string;
  pod: string;
} {
  const { name } = ac.metadata;
  return {
    disk: `${name}-disk`,
    service: serviceName(name, 'runner'),
    policy: `${name}-runner`,
    // A redeploy (new restartedAt) makes a new name, so the old pod and the new never share one.
    pod: `${name}-runner-${shortHash(ac.spec.restartedAt ?? 'initial')}`,
  };
}

const WAITING_HINTS: Record<string, (image: string, context: WorkloadContext) => string> = {
  ErrImagePull: (image) => `the image ${image} could not be pulled; check spec.resources.image`,
  ImagePullBackOff: (image) => `the image ${image} could not be pulled; check spec.resources.image`,
  InvalidImageName: (image) => `${image} is not a valid image name; check spec.resources.image`,
  CrashLoopBackOff: (image) =>
    `the runner in ${image} keeps exiting; the image must have \`agentry\` on its PATH and run as a non-root user`,
  CreateContainerConfigError: (_image, context) =>
    `the container cannot be configured; the runner token Secret ${context.tokenSecretName} may be missing`,
  CreateContainerError: (image) => `the container of ${image} cannot be created`,
};

const detail = (message: string | undefined): string =>
  message === undefined || message === '' ? '' : ` (${message.slice(0, 1000)})`;

type ContainerStatus = NonNullable<NonNullable<Pod['status']>['containerStatuses']>[number];

const imageOf = (pod: Pod, status: ContainerStatus): string =>
  pod.spec.containers.find((c) => c.name === status.name)?.image ?? status.image ?? 'unknown';

function containerError(pod: Pod, context: WorkloadContext): string | undefined {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const status of statuses) {
    const reason = status.state?.waiting?.reason ?? '';
    const hint = WAITING_HINTS[reason];
    if (hint !== undefined) {
      return `Pod cannot start: ${reason} — ${hint(imageOf(pod, status), context)}${detail(status.state?.waiting?.message)}`;
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
export const podProvisionError = (pod: Pod, context: WorkloadContext): string | undefined =>
  containerError(pod, context) ?? schedulingError(pod);

/** What one pod of the current deployment says about the workload. */
export function observePod(pod: Pod, endpoint: string, context: WorkloadContext): WorkloadObservation {
  const base = { provisioned: true, sandboxId: pod.metadata.name, endpoint };
  const provisionError = podProvisionError(pod, context);
  const running = pod.status?.phase === 'Running';
  const ready =
    running && pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
  if (provisionError !== undefined) {
    return {
      ...base,
      running,
      ready: false,
      provisionError,
      reason: 'ProvisionFailed',
      message: provisionError,
    };
  }
  if (ready)
    return { ...base, running, ready, reason: 'RunnerReady', message: `Pod ${pod.metadata.name} is ready` };
  const message = running
    ? `Pod ${pod.metadata.name} is running; waiting for the runner to listen on port ${RUNNER_PORT}`
    : `Pod ${pod.metadata.name} is ${pod.status?.phase ?? 'being created'}; waiting for it to run`;
  return { ...base, running, ready, reason: running ? 'Starting' : 'Provisioning', message };
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

  constructor(private readonly options: PodRuntimeOptions) {}

  async apply(
    ac: AgentComputer,
    context: WorkloadContext,
    signal: AbortSignal,
  ): Promise<WorkloadObservation> {
    const owner = controllerReference(ac);
    const names = podWorkloadNames(ac);
    const namespace = this.namespaceOf(ac);
    await this.ensureDisk(ac, owner);
    await this.ensure('service', () =>
      ensureObject(this.options.store, ServiceType, this.service(ac, owner), { merge: 'deep' }),
    );
    const policy = runnerNetworkPolicy({
      name: names.policy,
      namespace,
      labels: workloadLabels(ac),
      ownerReferences: [owner],
      controlNamespace: this.options.controlNamespace,
      port: RUNNER_PORT,
      egress: this.options.egress,
    });
    await this.ensure('policy', () =>
      ensureObject(this.options.store, NetworkPolicyType, policy, { merge: 'replace' }),
    );
    signal.throwIfAborted();
    const endpoint = serviceEndpoint(names.service, namespace, RUNNER_PORT);
    const pods = await this.ownedPods(ac, owner.uid);
    if (ac.spec.operatingMode === 'Hibernated') return this.hibernate(pods, endpoint);
    return this.run(ac, context, owner, pods, endpoint);
  }

  /** Owner references collect everything too; deleting here stops the runner without waiting for GC. */
  async remove(ac: AgentComputer): Promise<void> {
    const { uid } = ac.metadata;
    if (uid === undefined) return;
    const { store } = this.options;
    const namespace = this.namespaceOf(ac);
    const names = podWorkloadNames(ac);
    for (const pod of await this.ownedPods(ac, uid)) await deleteIfOwned(store, PodType, pod);
    await deleteControlled(store, ServiceType, namespace, names.service, uid);
    await deleteControlled(store, NetworkPolicyType, namespace, names.policy, uid);
    await deleteControlled(store, PersistentVolumeClaimType, namespace, names.disk, uid);
  }

  private async run(
    ac: AgentComputer,
    context: WorkloadContext,
    owner: OwnerReference,
    pods: Pod[],
    endpoint: string,
  ): Promise<WorkloadObservation> {
    const desired = this.pod(ac, context, owner);
    const stale = pods.filter((pod) => isStale(pod, desired));
    if (stale.length > 0) {
      // The disk is ReadWriteOnce and the runner keeps its event log on it: one runner at a time, so
      // the new pod waits until every old one is gone.
      await this.deletePods(stale);
      const names = stale.map((pod) => pod.metadata.name).join(', ');
      return {
        provisioned: true,
        running: false,
        ready: false,
        endpoint,
        reason: 'Redeploying',
        message: `Waiting for pod ${names} to stop before starting ${desired.metadata.name}`,
      };
    }
    const current =
      pods.find((pod) => pod.metadata.name === desired.metadata.name) ?? (await this.createPod(desired));
    return observePod(current, endpoint, context);
  }

  private async hibernate(pods: Pod[], endpoint: string): Promise<WorkloadObservation> {
    await this.deletePods(pods);
    const base = { provisioned: true, running: false, ready: false, endpoint };
    if (pods.length === 0) {
      return { ...base, reason: 'Hibernated', message: 'Hibernated: the pod is stopped, its disk is kept' };
    }
    const names = pods.map((pod) => pod.metadata.name).join(', ');
    return { ...base, reason: 'Hibernating', message: `Waiting for pod ${names} to stop` };
  }

  private async deletePods(pods: Pod[]): Promise<void> {
    for (const pod of pods) {
      if (pod.metadata.deletionTimestamp !== undefined) continue;
      this.options.logger.info(
        { pod: pod.metadata.name, namespace: pod.metadata.namespace },
        'deleting runner pod',
      );
      await deleteIfOwned(this.options.store, PodType, pod);
    }
  }

  private async createPod(desired: Pod): Promise<Pod> {
    const { namespace, name } = desired.metadata;
    this.options.logger.info({ pod: name, namespace }, 'creating runner pod');
    try {
      return await this.options.store.create(PodType, desired);
    } catch (err) {
      throw new Error(`creating runner pod ${namespace ?? ''}/${name}`, { cause: err });
    }
  }

  private async ownedPods(ac: AgentComputer, uid: string): Promise<Pod[]> {
    const { items } = await this.options.store.list(PodType, {
      namespace: this.namespaceOf(ac),
      labelSelector: `agentry.dev/agent-computer=${ac.metadata.name}`,
    });
    return items.filter((pod) =>
      pod.metadata.ownerReferences?.some((ref) => ref.controller === true && ref.uid === uid),
    );
  }

  private async ensure(what: string, write: () => Promise<{ wrote: string }>): Promise<void> {
    const { wrote } = await write();
    if (wrote !== 'unchanged') this.options.logger.info({ object: what, wrote }, `runner ${what} ${wrote}`);
  }

  private namespaceOf(ac: AgentComputer): string {
    const { namespace } = ac.metadata;
    if (namespace === undefined) throw new Error(`AgentComputer ${ac.metadata.name} has no namespace`);
    return namespace;
  }

  private resources(ac: AgentComputer): WorkloadDefaults & { image: string } {
    const { defaults, defaultImage } = this.options;
    const r = ac.spec.resources;
    return {
      cpu: r?.cpu ?? defaults.cpu,
      memory: r?.memory ?? defaults.memory,
      disk: r?.disk ?? defaults.disk,
      image: r?.image ?? defaultImage,
    };
  }

  private disk(ac: AgentComputer, owner: OwnerReference): PersistentVolumeClaim {
    const { storageClassName } = this.options;
    return {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: podWorkloadNames(ac).disk,
        namespace: this.namespaceOf(ac),
        labels: workloadLabels(ac),
        ownerReferences: [owner],
      },
      spec: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: this.resources(ac).disk } },
        ...(storageClassName === undefined ? {} : { storageClassName }),
      },
    };
  }

  /** The claim with our labels and owner; its spec is immutable but for the size, grown apart. */
  private async ensureDisk(ac: AgentComputer, owner: OwnerReference): Promise<void> {
    const desired = this.disk(ac, owner);
    const written = await ensureObject(this.options.store, PersistentVolumeClaimType, desired, {
      merge: 'deep',
      owned: () => ({ ...desired, spec: {} }),
    });
    if (written.wrote === 'created')
      this.options.logger.info({ pvc: desired.metadata.name }, 'runner disk created');
    else await this.growDisk(written.object, this.resources(ac).disk);
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
      logger.info(log, 'runner disk grown');
    } catch (err) {
      // Refused (a static volume, a class without expansion): the workload runs on the disk it has.
      if (!isStoreError(err, 'Forbidden') && !isStoreError(err, 'Invalid')) {
        throw new Error(`growing PersistentVolumeClaim ${pvc.metadata.name} to ${wanted}`, { cause: err });
      }
      logger.warn({ ...log, err }, 'runner disk cannot grow');
    }
  }

  private service(ac: AgentComputer, owner: OwnerReference): Service {
    return {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: podWorkloadNames(ac).service,
        namespace: this.namespaceOf(ac),
        labels: workloadLabels(ac),
        ownerReferences: [owner],
      },
      spec: {
        type: 'ClusterIP',
        selector: workloadLabels(ac),
        ports: [{ name: 'runner', protocol: 'TCP', port: RUNNER_PORT, targetPort: RUNNER_PORT }],
      },
    };
  }

  private pod(ac: AgentComputer, context: WorkloadContext, owner: OwnerReference): Pod {
    const { cpu, memory, image } = this.resources(ac);
    const names = podWorkloadNames(ac);
    const spec = {
      automountServiceAccountToken: false,
      // Service environment variables would list the namespace's other services to the agent.
      enableServiceLinks: false,
      restartPolicy: 'Always',
      securityContext: {
        runAsNonRoot: true,
        runAsUser: RUNNER_UID,
        runAsGroup: RUNNER_UID,
        fsGroup: RUNNER_UID,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: [
        {
          name: 'runner',
          image,
          command: ['agentry', 'runner'],
          ports: [{ name: 'runner', containerPort: RUNNER_PORT, protocol: 'TCP' }],
          env: [
            // From the Secret by reference: the token never appears in the pod spec.
            {
              name: 'AGENTRY_RUNNER_TOKEN',
              valueFrom: { secretKeyRef: { name: context.tokenSecretName, key: 'token' } },
            },
            { name: 'AGENTRY_RUNNER_PORT', value: String(RUNNER_PORT) },
            { name: 'AGENTRY_RUNNER_WORKDIR', value: WORKDIR },
            { name: 'AGENTRY_RUNNER_STATE_DIR', value: RUNNER_STATE_DIR },
          ],
          // One disk, two folders: the agent's /code, and the runner's event logs beside it (out of
          // the agent's way, and kept through hibernation like /code).
          volumeMounts: [
            { name: 'code', mountPath: WORKDIR, subPath: 'code' },
            { name: 'code', mountPath: RUNNER_STATE_DIR, subPath: 'runner-state' },
          ],
          // TCP, not HTTP: the runner requires its token on every request and an httpGet probe can
          // only send headers written into the pod spec. The operator checks /healthz with the token.
          readinessProbe: { tcpSocket: { port: RUNNER_PORT }, periodSeconds: 5, failureThreshold: 3 },
          // Limits equal requests: a workspace gets what it asked for, no more (Guaranteed QoS).
          resources: { requests: { cpu, memory }, limits: { cpu, memory } },
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
        },
      ],
      volumes: [{ name: 'code', persistentVolumeClaim: { claimName: names.disk } }],
    };
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: names.pod,
        namespace: this.namespaceOf(ac),
        labels: workloadLabels(ac),
        annotations: {
          [TEMPLATE_HASH_ANNOTATION]: shortHash(JSON.stringify(spec), 16),
          ...(ac.spec.restartedAt === undefined ? {} : { 'agentry.dev/restarted-at': ac.spec.restartedAt }),
        },
        ownerReferences: [owner],
      },
      spec,
    };
  }
}
