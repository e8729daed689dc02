import { z } from 'zod';
import { apiVersionOf } from '../../../crds/resource.js';
import type { KubeObject, ResourceType } from '../../../crds/resource.js';
import { StoreError } from '../types.js';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const NamedSchema = z.object({
  metadata: z.object({ name: z.string().optional(), namespace: z.string().optional() }),
});

/** `"ns-a/p1"`, `"p1"` or `an unnamed object`: names what failed to parse. */
function nameOf(raw: unknown): string {
  const parsed = NamedSchema.safeParse(raw);
  if (!parsed.success || parsed.data.metadata.name === undefined) return 'an unnamed object';
  const { name, namespace } = parsed.data.metadata;
  return namespace === undefined ? `"${name}"` : `"${namespace}/${name}"`;
}

function describeIssues(error: z.ZodError): string {
  const shown = error.issues.slice(0, 5).map((issue) => {
    const path = issue.path.map(String).join('.');
    return path === '' ? issue.message : `${path}: ${issue.message}`;
  });
  const more = error.issues.length > shown.length ? ` (and ${error.issues.length - shown.length} more)` : '';
  return `${shown.join('; ')}${more}`;
}

/**
 * Parses an object the API server sent. List items come without apiVersion and kind, so those are
 * filled in from the type when absent.
 */
export function decodeObject<T extends KubeObject>(type: ResourceType<T>, raw: unknown, context: string): T {
  const candidate = isRecord(raw) ? { apiVersion: apiVersionOf(type), kind: type.kind, ...raw } : raw;
  const parsed = type.schema.safeParse(candidate);
  if (parsed.success) return parsed.data;
  const message = `${context}: the API server sent ${type.kind} ${nameOf(raw)} that does not parse: ${describeIssues(parsed.error)}`;
  throw new StoreError('Invalid', message, { cause: parsed.error });
}

export const ListSchema = z.object({
  metadata: z.object({ resourceVersion: z.string().optional(), continue: z.string().optional() }).optional(),
  items: z.array(z.unknown()).nullish(),
});

export const WatchEventSchema = z.object({
  type: z.enum(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']),
  object: z.unknown(),
});

export const VersionSchema = z.object({
  metadata: z.object({ resourceVersion: z.string().min(1) }),
});

/** Whether an answer is a `Status` rather than an object (DELETE answers either). */
export const isStatusObject = (body: unknown): boolean => isRecord(body) && body.kind === 'Status';
