// Inspected by shape, not `instanceof Error`: errors made by Node's own modules fail that check when
// the code runs in another realm (jest's VM modules).

/** The errno code (`ENOENT`, `ESRCH`...) of a system error, if it is one. */
export const errnoOf = (err: unknown): string | undefined =>
  typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string'
    ? err.code
    : undefined;
