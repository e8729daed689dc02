// Realm-independent: `instanceof Error` is false for errors made by Node's own modules when this code
// runs in another realm (jest's VM modules), so errors are inspected by shape.

const MAX_CAUSES = 5;

const messageOf = (value: unknown): string | undefined =>
  typeof value === 'object' && value !== null && 'message' in value && typeof value.message === 'string'
    ? value.message
    : undefined;

/** A thrown non-error (a string, a plain object) in words: JSON where possible, never "[object Object]". */
const textOf = (value: unknown): string => {
  if (typeof value === 'string') return value;
  try {
    // JSON.stringify answers undefined for undefined, functions and symbols.
    const json: unknown = JSON.stringify(value);
    return typeof json === 'string' ? json : typeof value;
  } catch {
    return typeof value;
  }
};

const causeOf = (value: unknown): unknown =>
  typeof value === 'object' && value !== null && 'cause' in value ? value.cause : undefined;

/**
 * An error and its causes in one line ("ensuring Service x: ...: the range is full" says why), at
 * most `maxLength` characters: for conditions, Events and logs a person reads.
 */
export function describeError(err: unknown, maxLength = 4096): string {
  const parts = [messageOf(err) ?? textOf(err)];
  for (let cause = causeOf(err); cause !== undefined && parts.length < MAX_CAUSES; cause = causeOf(cause)) {
    parts.push(messageOf(cause) ?? textOf(cause));
  }
  return parts.join(': ').slice(0, maxLength);
}
