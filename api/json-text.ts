/**
 * A response body already serialized as JSON: a route answers it as it is instead of an object
 * for `res.json` to serialize again. For bodies assembled from cached presentations (a task
 * record, a page of them), whose serialization would otherwise be most of a read's work. The text
 * must be exactly what `JSON.stringify` of the equivalent object gives, so clients see no
 * difference.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

/**
 * The JSON text of an object with one more field after its own: `{...object, [name]: value}`,
 * given the object's serialization without its closing brace (`openObjectJson`).
 */
export const withField = (
  openObject: string,
  name: string,
  value: string | number | boolean | null,
): string => `${openObject},${JSON.stringify(name)}:${JSON.stringify(value)}}`;

/** An object's JSON text without its closing brace, for `withField`; the object must have a field. */
export const openObjectJson = (object: object): string => JSON.stringify(object).slice(0, -1);
