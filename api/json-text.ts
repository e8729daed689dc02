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
