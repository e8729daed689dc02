import type { ResourceType } from '../../../crds/resource.js';
import { StoreError } from '../types.js';

type TypeRef = Pick<ResourceType, 'group' | 'version' | 'plural' | 'namespaced'>;

/** `secrets` or `probes.agentry.dev`: how Kubernetes names a resource in its messages. */
export const resourceName = (type: Pick<ResourceType, 'group' | 'plural'>): string =>
  type.group === '' ? type.plural : `${type.plural}.${type.group}`;

/** `probes.agentry.dev "p1" in namespace "ns-a"`, for error messages. */
export function describeObject(type: TypeRef, namespace: string | undefined, name: string): string {
  const where = type.namespaced && namespace !== undefined ? ` in namespace "${namespace}"` : '';
  return `${resourceName(type)} "${name}"${where}`;
}

/** `probes.agentry.dev in namespace "ns-a"` or `probes.agentry.dev in all namespaces`. */
export function describeCollection(type: TypeRef, namespace: string | undefined): string {
  if (!type.namespaced) return resourceName(type);
  return namespace === undefined
    ? `${resourceName(type)} in all namespaces`
    : `${resourceName(type)} in namespace "${namespace}"`;
}

const groupVersionPath = (type: TypeRef): string =>
  type.group === ''
    ? `/api/${encodeURIComponent(type.version)}`
    : `/apis/${encodeURIComponent(type.group)}/${encodeURIComponent(type.version)}`;

/**
 * The collection's path: `/api/v1/namespaces/a/secrets`, `/apis/agentry.dev/v1alpha1/probes` (every
 * namespace, or a cluster-scoped type). A namespace given for a cluster-scoped type is ignored.
 */
export function collectionPath(type: TypeRef, namespace: string | undefined): string {
  const scope =
    type.namespaced && namespace !== undefined ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${groupVersionPath(type)}${scope}/${encodeURIComponent(type.plural)}`;
}

/** One object's path, or its subresource's; a namespaced type needs the namespace. */
export function objectPath(
  type: TypeRef,
  namespace: string | undefined,
  name: string,
  subresource?: 'status',
): string {
  if (type.namespaced && (namespace === undefined || namespace === '')) {
    throw new StoreError('Invalid', `${describeObject(type, undefined, name)}: a namespace is required`);
  }
  if (name === '') throw new StoreError('Invalid', `${resourceName(type)}: a name is required`);
  const path = `${collectionPath(type, namespace)}/${encodeURIComponent(name)}`;
  return subresource === undefined ? path : `${path}/${subresource}`;
}

/** The path to POST a new object to; a namespaced type needs the namespace. */
export function createPath(type: TypeRef, namespace: string | undefined, name: string): string {
  if (type.namespaced && (namespace === undefined || namespace === '')) {
    throw new StoreError('Invalid', `${describeObject(type, undefined, name)}: a namespace is required`);
  }
  return collectionPath(type, namespace);
}
