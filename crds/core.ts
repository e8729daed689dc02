import { z } from 'zod';
import { ObjectMetaSchema } from './meta.js';
import type { ResourceType } from './resource.js';

/** core/v1 Secret: credentials never live in Agentry resources, only here (values base64 encoded). */
export const SecretSchema = z.object({
  apiVersion: z.literal('v1'),
  kind: z.literal('Secret'),
  metadata: ObjectMetaSchema,
  type: z.string().optional(),
  data: z.record(z.string(), z.string()).optional(),
});
export type Secret = z.infer<typeof SecretSchema>;

export const SecretType: ResourceType<Secret> = {
  group: '',
  version: 'v1',
  kind: 'Secret',
  plural: 'secrets',
  namespaced: true,
  hasStatusSubresource: false,
  schema: SecretSchema,
};

export const NamespaceSchema = z.object({
  apiVersion: z.literal('v1'),
  kind: z.literal('Namespace'),
  metadata: ObjectMetaSchema,
  status: z.object({ phase: z.string().optional() }).optional(),
});
export type Namespace = z.infer<typeof NamespaceSchema>;

export const NamespaceType: ResourceType<Namespace> = {
  group: '',
  version: 'v1',
  kind: 'Namespace',
  plural: 'namespaces',
  namespaced: false,
  hasStatusSubresource: true,
  schema: NamespaceSchema,
};

/** Reads a Secret value as text. */
export function secretValue(secret: Secret, key: string): string | undefined {
  const encoded = secret.data?.[key];
  return encoded === undefined ? undefined : Buffer.from(encoded, 'base64').toString('utf8');
}

/** Encodes text values into a Secret's data map. */
export function secretData(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')]),
  );
}

/** coordination.k8s.io/v1 Lease: leader election of operator replicas. */
export const LeaseSchema = z.object({
  apiVersion: z.literal('coordination.k8s.io/v1'),
  kind: z.literal('Lease'),
  metadata: ObjectMetaSchema,
  spec: z
    .object({
      holderIdentity: z.string().nullable().optional(),
      leaseDurationSeconds: z.number().int().nullable().optional(),
      acquireTime: z.string().nullable().optional(),
      renewTime: z.string().nullable().optional(),
      leaseTransitions: z.number().int().nullable().optional(),
    })
    .optional(),
});
export type Lease = z.infer<typeof LeaseSchema>;

export const LeaseType: ResourceType<Lease> = {
  group: 'coordination.k8s.io',
  version: 'v1',
  kind: 'Lease',
  plural: 'leases',
  namespaced: true,
  hasStatusSubresource: false,
  schema: LeaseSchema,
};

/** core/v1 Event: what `kubectl describe` shows under a resource. */
export const EventSchema = z.object({
  apiVersion: z.literal('v1'),
  kind: z.literal('Event'),
  metadata: ObjectMetaSchema,
  involvedObject: z.object({
    apiVersion: z.string().optional(),
    kind: z.string().optional(),
    name: z.string().optional(),
    namespace: z.string().optional(),
    uid: z.string().optional(),
  }),
  type: z.enum(['Normal', 'Warning']).optional(),
  reason: z.string().optional(),
  message: z.string().optional(),
  count: z.number().int().optional(),
  firstTimestamp: z.string().nullable().optional(),
  lastTimestamp: z.string().nullable().optional(),
  source: z.object({ component: z.string().optional() }).optional(),
  reportingComponent: z.string().optional(),
  reportingInstance: z.string().optional(),
});
export type KubeEvent = z.infer<typeof EventSchema>;

export const EventType: ResourceType<KubeEvent> = {
  group: '',
  version: 'v1',
  kind: 'Event',
  plural: 'events',
  namespaced: true,
  hasStatusSubresource: false,
  schema: EventSchema,
};
