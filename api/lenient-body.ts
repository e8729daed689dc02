import type { z } from 'zod';

/**
 * Request bodies are lenient: clients of the hosted service send fields Agentry does not know
 * (`mcpServers`, `agent_instructions` on a task), and must not have to change to use it. A field
 * the schema does not know is dropped and named in a `Warning` header; a known field of the wrong
 * type is still a validation error. The schemas stay strict objects, so zod itself names the
 * unknown fields (at any depth) and nothing else can slip through unseen.
 */

export type LenientParse<T> =
  { success: true; data: T; ignored: string[] } | { success: false; issues: readonly z.core.$ZodIssue[] };

/** Enough passes for unknown fields nested in unknown shapes of a union; each pass removes some. */
const MAX_PASSES = 4;

type JsonContainer = Record<string, unknown> | unknown[];

const isContainer = (value: unknown): value is JsonContainer => typeof value === 'object' && value !== null;

/** `value` with the object at `path` replaced by a copy without `keys` (the rest shared, never changed). */
function without(value: unknown, path: readonly PropertyKey[], keys: readonly string[]): unknown {
  if (!isContainer(value)) return value;
  const [head, ...rest] = path;
  if (head === undefined) {
    if (Array.isArray(value)) return value;
    return Object.fromEntries(Object.entries(value).filter(([key]) => !keys.includes(key)));
  }
  if (Array.isArray(value)) {
    const index = Number(head);
    return value.map((item, i) => (i === index ? without(item, rest, keys) : item));
  }
  const name = String(head);
  return Object.hasOwn(value, name) ? { ...value, [name]: without(value[name], rest, keys) } : value;
}

export function parseLenient<T>(schema: z.ZodType<T>, value: unknown): LenientParse<T> {
  let candidate: unknown = value;
  const ignored: string[] = [];
  for (let pass = 0; ; pass++) {
    const parsed = schema.safeParse(candidate);
    if (parsed.success) return { success: true, data: parsed.data, ignored };
    const unknown = parsed.error.issues.filter((issue) => issue.code === 'unrecognized_keys');
    if (unknown.length === 0 || pass >= MAX_PASSES) return { success: false, issues: parsed.error.issues };
    for (const issue of unknown) {
      candidate = without(candidate, issue.path, issue.keys);
      ignored.push(...issue.keys.map((key) => [...issue.path.map(String), key].join('.')));
    }
  }
}

/** Names a client chose, made safe for a header value: printable ASCII without quotes, bounded. */
const MAX_NAMES = 20;
const MAX_NAME_LENGTH = 100;
const headerSafe = (name: string): string =>
  name.replace(/[^\x20-\x7e]|["\\]/g, '?').slice(0, MAX_NAME_LENGTH);

/** RFC 7234's `Warning` (code 299, "miscellaneous persistent warning") naming the ignored fields. */
export function ignoredFieldsWarning(ignored: readonly string[]): string {
  const names = ignored.slice(0, MAX_NAMES).map(headerSafe);
  const more = ignored.length > MAX_NAMES ? ` and ${ignored.length - MAX_NAMES} more` : '';
  return `299 agentry "ignored unknown fields: ${names.join(', ')}${more}"`;
}
