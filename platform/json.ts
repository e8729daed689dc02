/** The JSON value of `text`, or undefined when it is not JSON (callers validate the shape with zod). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
