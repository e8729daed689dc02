import type { z } from 'zod';
import type { KubeObject, ResourceType } from '../../../crds/resource.js';
import { apiVersionOf } from '../../../crds/resource.js';
import { labelKeyProblem, labelValueProblem } from '../selector.js';
import { StoreError } from '../types.js';
import type { StoredObject } from './objects.js';
import { StoredObjectSchema } from './objects.js';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** `path: message; path: message`, the readable form of a schema failure. */
export function formatIssues(error: z.ZodError): string {
  return error.issues
    .map(
      (issue) =>
        `${issue.path.length === 0 ? '(object)' : issue.path.map(String).join('.')}: ${issue.message}`,
    )
    .join('; ');
}

/** A JSON round trip: what a client sending the object over the wire would transmit. */
export function jsonCopy(value: unknown, what: string): unknown {
  try {
    const text = JSON.stringify(value);
    if (typeof text !== 'string') throw new TypeError('not a JSON value');
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new StoreError('Invalid', `${what} is not JSON data`, { cause: err });
  }
}

/** Kubernetes' timestamp form: RFC 3339 in UTC with seconds precision. */
export const formatTimestamp = (date: Date): string => `${date.toISOString().slice(0, 19)}Z`;

export function nameProblem(name: string): string | undefined {
  if (name.length === 0 || name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
    return `metadata.name "${name}" must be a lowercase RFC 1123 subdomain of at most 253 characters`;
  }
  return undefined;
}

/** Checks the namespace against the type's scope (used by every call that names an object). */
export function checkScope(type: ResourceType, namespace: string | undefined): void {
  if (!type.namespaced) {
    if (namespace !== undefined) {
      throw new StoreError(
        'Invalid',
        `${type.plural}.${type.group} is cluster-scoped: namespace must be omitted`,
      );
    }
    return;
  }
  if (namespace === undefined || namespace === '') {
    throw new StoreError('Invalid', `${type.plural}.${type.group} is namespaced: a namespace is required`);
  }
  if (namespace.length > 63 || !DNS_LABEL.test(namespace)) {
    throw new StoreError('Invalid', `namespace "${namespace}" must be a lowercase RFC 1123 label`);
  }
}

function metadataProblems(object: StoredObject): string[] {
  const { metadata } = object;
  const problems: string[] = [];
  const name = nameProblem(metadata.name);
  if (name !== undefined) problems.push(name);
  for (const [key, value] of Object.entries(metadata.labels ?? {})) {
    const problem = labelKeyProblem(key) ?? labelValueProblem(value);
    if (problem !== undefined) problems.push(`metadata.labels: ${problem}`);
  }
  const owners = metadata.ownerReferences ?? [];
  owners.forEach((owner, i) => {
    if ([owner.apiVersion, owner.kind, owner.name, owner.uid].some((field) => field === '')) {
      problems.push(`metadata.ownerReferences.${i}: apiVersion, kind, name and uid are required`);
    }
  });
  if (owners.filter((owner) => owner.controller === true).length > 1) {
    problems.push('metadata.ownerReferences: only one reference can have controller set to true');
  }
  return problems;
}

/**
 * Reads what a caller passed as an object of `type`: a JSON copy with a valid envelope (apiVersion and
 * kind of the type, a valid name, a namespace exactly when the type is namespaced). The payload is
 * validated later, on the object as it would be stored.
 */
export function parseEnvelope(type: ResourceType, input: unknown): StoredObject {
  const parsed = StoredObjectSchema.safeParse(jsonCopy(input, `the ${type.kind}`));
  if (!parsed.success)
    throw new StoreError('Invalid', `${type.kind} is invalid: ${formatIssues(parsed.error)}`);
  const object = parsed.data;
  const apiVersion = apiVersionOf(type);
  const problems: string[] = [];
  if (object.apiVersion !== apiVersion)
    problems.push(`apiVersion: must be ${apiVersion}, not ${object.apiVersion}`);
  if (object.kind !== type.kind) problems.push(`kind: must be ${type.kind}, not ${object.kind}`);
  problems.push(...metadataProblems(object));
  if (problems.length > 0) {
    throw new StoreError(
      'Invalid',
      `${type.kind} "${object.metadata.name}" is invalid: ${problems.join('; ')}`,
    );
  }
  checkScope(type, object.metadata.namespace);
  return object;
}

/** Validates the object about to be stored with the type's schema; returns what the schema keeps, as JSON. */
export function validateForStorage(type: ResourceType, candidate: StoredObject): StoredObject {
  const typed = type.schema.safeParse(candidate);
  const subject = `${type.kind} "${candidate.metadata.name}"`;
  if (!typed.success) throw new StoreError('Invalid', `${subject} is invalid: ${formatIssues(typed.error)}`);
  const stored = StoredObjectSchema.safeParse(jsonCopy(typed.data, subject));
  if (!stored.success)
    throw new StoreError('Invalid', `${subject} is invalid: ${formatIssues(stored.error)}`);
  return stored.data;
}

/** A caller's own copy of a stored object, typed by the type's schema. */
export function toTyped<T extends KubeObject>(type: ResourceType<T>, object: StoredObject): T {
  const typed = type.schema.safeParse(structuredClone(object));
  if (!typed.success) {
    const { namespace, name } = object.metadata;
    throw new StoreError(
      'Unavailable',
      `stored ${type.kind} ${namespace === undefined ? '' : `${namespace}/`}${name} does not match the ${type.kind} schema: ${formatIssues(typed.error)}`,
    );
  }
  return typed.data;
}
