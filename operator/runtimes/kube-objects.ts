// Kubernetes kinds the pod and kubevirt runtimes make (ensure-object.ts creates and updates them).
// Schemas type only the fields we read or write; `z.looseObject` keeps every other field, so a
// read-modify-write never drops what the API server, KubeVirt's webhooks or an admin added.
import { z } from 'zod';
import { ObjectMetaSchema } from '../../crds/index.js';
import type { ResourceType } from '../../crds/index.js';

const ConditionSchema = z.looseObject({
  type: z.string(),
  status: z.string(),
  reason: z.string().optional(),
  message: z.string().optional(),
});

const ContainerStateSchema = z.looseObject({
  waiting: z.looseObject({ reason: z.string().optional(), message: z.string().optional() }).optional(),
  terminated: z
    .looseObject({ reason: z.string().optional(), message: z.string().optional(), exitCode: z.number() })
    .optional(),
});

const ContainerStatusSchema = z.looseObject({
  name: z.string(),
  image: z.string().optional(),
  ready: z.boolean().optional(),
  state: ContainerStateSchema.optional(),
});

export const PodSchema = z.object({
  apiVersion: z.literal('v1'),
  kind: z.literal('Pod'),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({
    containers: z.array(z.looseObject({ name: z.string(), image: z.string().optional() })),
  }),
  status: z
    .looseObject({
      phase: z.string().optional(),
      podIP: z.string().optional(),
      reason: z.string().optional(),
      message: z.string().optional(),
      conditions: z.array(ConditionSchema).optional(),
      containerStatuses: z.array(ContainerStatusSchema).optional(),
      initContainerStatuses: z.array(ContainerStatusSchema).optional(),
    })
    .optional(),
});
export type Pod = z.infer<typeof PodSchema>;
export const PodType: ResourceType<Pod> = {
  group: '',
  version: 'v1',
  kind: 'Pod',
  plural: 'pods',
  namespaced: true,
  hasStatusSubresource: true,
  schema: PodSchema,
};

export const PersistentVolumeClaimSchema = z.object({
  apiVersion: z.literal('v1'),
  kind: z.literal('PersistentVolumeClaim'),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({
    accessModes: z.array(z.string()).optional(),
    storageClassName: z.string().nullish(),
    resources: z.looseObject({ requests: z.record(z.string(), z.string()).optional() }).optional(),
  }),
  status: z.looseObject({ phase: z.string().optional() }).optional(),
});
export type PersistentVolumeClaim = z.infer<typeof PersistentVolumeClaimSchema>;
export const PersistentVolumeClaimType: ResourceType<PersistentVolumeClaim> = {
  group: '',
  version: 'v1',
  kind: 'PersistentVolumeClaim',
  plural: 'persistentvolumeclaims',
  namespaced: true,
  hasStatusSubresource: true,
  schema: PersistentVolumeClaimSchema,
};

export const ServiceSchema = z.object({
  apiVersion: z.literal('v1'),
  kind: z.literal('Service'),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({
    type: z.string().optional(),
    selector: z.record(z.string(), z.string()).optional(),
    ports: z.array(z.looseObject({ port: z.number() })).optional(),
  }),
  status: z.looseObject({}).optional(),
});
export type Service = z.infer<typeof ServiceSchema>;
export const ServiceType: ResourceType<Service> = {
  group: '',
  version: 'v1',
  kind: 'Service',
  plural: 'services',
  namespaced: true,
  hasStatusSubresource: true,
  schema: ServiceSchema,
};

export const NetworkPolicySchema = z.object({
  apiVersion: z.literal('networking.k8s.io/v1'),
  kind: z.literal('NetworkPolicy'),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({
    podSelector: z.looseObject({ matchLabels: z.record(z.string(), z.string()).optional() }),
    policyTypes: z.array(z.string()).optional(),
    ingress: z.array(z.looseObject({})).optional(),
    egress: z.array(z.looseObject({})).optional(),
  }),
});
export type NetworkPolicy = z.infer<typeof NetworkPolicySchema>;
export const NetworkPolicyType: ResourceType<NetworkPolicy> = {
  group: 'networking.k8s.io',
  version: 'v1',
  kind: 'NetworkPolicy',
  plural: 'networkpolicies',
  namespaced: true,
  hasStatusSubresource: false,
  schema: NetworkPolicySchema,
};

export const VirtualMachineSchema = z.object({
  apiVersion: z.literal('kubevirt.io/v1'),
  kind: z.literal('VirtualMachine'),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({
    // A string, not an enum: KubeVirt also knows Manual, Once and RerunOnFailure.
    runStrategy: z.string().optional(),
    template: z
      .looseObject({
        metadata: z
          .looseObject({
            labels: z.record(z.string(), z.string()).optional(),
            annotations: z.record(z.string(), z.string()).optional(),
          })
          .optional(),
      })
      .optional(),
    dataVolumeTemplates: z.array(z.looseObject({})).optional(),
  }),
  status: z
    .looseObject({
      printableStatus: z.string().optional(),
      ready: z.boolean().optional(),
      conditions: z.array(ConditionSchema).optional(),
    })
    .optional(),
});
export type VirtualMachine = z.infer<typeof VirtualMachineSchema>;
export const VirtualMachineType: ResourceType<VirtualMachine> = {
  group: 'kubevirt.io',
  version: 'v1',
  kind: 'VirtualMachine',
  plural: 'virtualmachines',
  namespaced: true,
  hasStatusSubresource: true,
  schema: VirtualMachineSchema,
};

/** A VM's running instance (KubeVirt makes it, named as its VM): read for the address it reports. */
export const VirtualMachineInstanceSchema = z.object({
  apiVersion: z.literal('kubevirt.io/v1'),
  kind: z.literal('VirtualMachineInstance'),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({}),
  status: z
    .looseObject({
      phase: z.string().optional(),
      interfaces: z
        .array(
          z.looseObject({
            name: z.string().optional(),
            ipAddress: z.string().optional(),
            ipAddresses: z.array(z.string()).optional(),
          }),
        )
        .optional(),
    })
    .optional(),
});
export type VirtualMachineInstance = z.infer<typeof VirtualMachineInstanceSchema>;
export const VirtualMachineInstanceType: ResourceType<VirtualMachineInstance> = {
  group: 'kubevirt.io',
  version: 'v1',
  kind: 'VirtualMachineInstance',
  plural: 'virtualmachineinstances',
  namespaced: true,
  hasStatusSubresource: true,
  schema: VirtualMachineInstanceSchema,
};
