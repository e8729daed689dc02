// Realm-independent checks: `instanceof Error` is false for errors made by Node's own modules when
// this code runs in another realm (jest's VM modules), so errors are inspected by shape.

/** The error's message followed by its cause's, for a one-line explanation. */
export function describeError(err: unknown): string {
  const messageOf = (value: unknown): string | undefined =>
    typeof value === 'object' && value !== null && 'message' in value && typeof value.message === 'string'
      ? value.message
      : undefined;
  const message = messageOf(err) ?? String(err);
  const cause = typeof err === 'object' && err !== null && 'cause' in err ? messageOf(err.cause) : undefined;
  return cause === undefined ? message : `${message}: ${cause}`;
}
