import { z } from 'zod';
import { ObjectMetaSchema } from './meta.js';
import type { ObjectMeta } from './meta.js';

/** Any object the resource store holds: Kubernetes' envelope around a payload. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
}

/** Describes one kind of resource to the store: where it is served and how to validate it. */
export interface ResourceType<T extends KubeObject = KubeObject> {
  /** API group; '' for the core group (Secrets, Namespaces). */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  /** Whether status is a subresource: replace() leaves it alone and replaceStatus() writes only it. */
  readonly hasStatusSubresource: boolean;
  /** Parses an object read from storage; unknown fields are dropped, as Kubernetes prunes them. */
  readonly schema: z.ZodType<T>;
}

export const apiVersionOf = (type: Pick<ResourceType, 'group' | 'version'>): string =>
  type.group === '' ? type.version : `${type.group}/${type.version}`;

/** A printer column for `kubectl get` (CRD additionalPrinterColumns). */
export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
}

export type CustomResource<Spec, Status> = KubeObject & { spec: Spec; status?: Status | undefined };

/** An Agentry custom resource kind: its schemas are the single source of truth for the CRD. */
export interface CustomResourceType<Spec = unknown, Status = unknown> extends ResourceType<
  CustomResource<Spec, Status>
> {
  readonly singular: string;
  readonly listKind: string;
  readonly shortNames: readonly string[];
  readonly description: string;
  readonly specSchema: z.ZodType<Spec>;
  readonly statusSchema: z.ZodType<Status>;
  readonly printerColumns: readonly PrinterColumn[];
}

interface CustomResourceDefinitionInput<Spec, Status> {
  group: string;
  version: string;
  kind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames: readonly string[];
  description: string;
  spec: z.ZodType<Spec>;
  status: z.ZodType<Status>;
  printerColumns: readonly PrinterColumn[];
}

export function defineCustomResource<Spec, Status>(
  input: CustomResourceDefinitionInput<Spec, Status>,
): CustomResourceType<Spec, Status> {
  const apiVersion = apiVersionOf(input);
  const schema = z.object({
    apiVersion: z.literal(apiVersion),
    kind: z.literal(input.kind),
    metadata: ObjectMetaSchema,
    spec: input.spec,
    status: input.status.optional(),
  }) as unknown as z.ZodType<CustomResource<Spec, Status>>; // the object schema infers exactly this shape
  return {
    group: input.group,
    version: input.version,
    kind: input.kind,
    plural: input.plural,
    singular: input.singular,
    listKind: `${input.kind}List`,
    namespaced: input.namespaced,
    hasStatusSubresource: true,
    shortNames: input.shortNames,
    description: input.description,
    specSchema: input.spec,
    statusSchema: input.status,
    printerColumns: input.printerColumns,
    schema,
  };
}
