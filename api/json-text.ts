import { createHash } from 'node:crypto';

/**
 * A response body already serialized as JSON: a route answers it as it is instead of an object
 * for `res.json` to serialize again. For bodies assembled from cached presentations (a task
 * record, a page of them), whose serialization would otherwise be most of a read's work. The text
 * must be exactly what `JSON.stringify` of the equivalent object gives, so clients see no
 * difference.
 */
export class JsonText {
  private encoded: Buffer | undefined;
  private weakEtag: string | undefined;

  constructor(readonly text: string) {}

  /** The text as UTF-8, encoded once however often a cached JsonText is answered. */
  get bytes(): Buffer {
    return (this.encoded ??= Buffer.from(this.text, 'utf8'));
  }

  /**
   * The ETag Express gives these bytes (its default `etag: 'weak'`), computed once: a response that
   * carries it spares Express hashing the body on every request.
   */
  get etag(): string {
    return (this.weakEtag ??= weakEtagOf(this.bytes));
  }
}

/**
 * What the etag package (Express's ETag) computes with `weak: true` for a non-empty body: the
 * length in hex and the SHA-1 in base64, cut to 27 characters. JSON text is never empty.
 */
function weakEtagOf(bytes: Buffer): string {
  const hash = createHash('sha1').update(bytes).digest('base64').substring(0, 27);
  return `W/"${bytes.length.toString(16)}-${hash}"`;
}

/**
 * Appends one field to objects: the JSON text of `{...object, [name]: value}` from the object's
 * serialization without its closing brace (`openObjectJson`).
 */
export function fieldAppender(
  name: string,
): (openObject: string, value: string | number | boolean | null) => string {
  const key = `,${JSON.stringify(name)}:`;
  return (openObject, value) => `${openObject}${key}${JSON.stringify(value)}}`;
}

/** An object's JSON text without its closing brace, for `fieldAppender`; the object must have a field. */
export const openObjectJson = (object: object): string => JSON.stringify(object).slice(0, -1);
