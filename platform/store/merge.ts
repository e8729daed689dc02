/**
 * Structural equality of JSON-like values, as the API server compares objects: key order does not
 * matter, and a key whose value is undefined is the same as an absent key (JSON drops both).
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && arraysEqual(a, b);
  }
  return recordsEqual(a, b);
}

function arraysEqual(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
}

function definedEntries(value: object): Map<string, unknown> {
  return new Map(Object.entries(value).filter(([, v]) => v !== undefined));
}

function recordsEqual(a: object, b: object): boolean {
  const left = definedEntries(a);
  const right = definedEntries(b);
  if (left.size !== right.size) return false;
  for (const [key, value] of left) {
    if (!right.has(key) || !deepEqual(value, right.get(key))) return false;
  }
  return true;
}
