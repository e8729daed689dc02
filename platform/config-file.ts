import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';

/**
 * Reads a configuration file an operator names in a setting (YAML or JSON) and validates it; a
 * problem throws an error naming the file and each bad path, so start-up stops with a clear line.
 */
export async function readConfigFile<T>(path: string, schema: z.ZodType<T>, what: string): Promise<T> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read the ${what} file ${path}`, { cause: err });
  }
  const parsed = schema.safeParse(parseYaml(text));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid ${what} file ${path}:\n  ${problems.join('\n  ')}`);
  }
  return parsed.data;
}
