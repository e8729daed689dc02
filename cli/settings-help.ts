import { z } from 'zod';

/** Help lines longer than this wrap (a terminal's 100 columns). */
const LINE_WIDTH = 100;

/** The default a setting's schema gives when the variable is unset, as it would be written. */
function defaultOf(schema: z.core.SomeType | undefined): string | undefined {
  if (schema instanceof z.ZodDefault) {
    const value: unknown = schema.def.defaultValue;
    return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
  }
  if (schema instanceof z.ZodPipe) return defaultOf(schema.def.in);
  return undefined;
}

/**
 * The settings section of a command's help: one line per environment variable with what it does
 * and its default, read from the schema that parses it (so the help cannot drift from the code).
 */
export function settingsHelp<Shape extends z.ZodRawShape>(
  schema: z.ZodObject<Shape>,
  settings: ReadonlyArray<readonly [keyof Shape & string, string]>,
): string {
  const width = Math.max(...settings.map(([name]) => name.length));
  const lines = settings.map(([name, text]) => {
    const line = `  ${name.padEnd(width)}  ${text}`;
    const fallback = defaultOf(schema.shape[name]);
    if (fallback === undefined) return line;
    const shown = `(default ${fallback === '' ? 'empty' : fallback})`;
    // A long line keeps its default on the next one, under the text.
    return line.length + shown.length < LINE_WIDTH
      ? `${line} ${shown}`
      : `${line}\n${' '.repeat(width + 4)}${shown}`;
  });
  return `settings (environment variables):\n${lines.join('\n')}\n`;
}

/** Words joined by `, ` into lines of at most `width` characters, each after `indent`. */
export function wrapList(words: readonly string[], indent: string, width = LINE_WIDTH): string {
  const lines: string[] = [];
  for (const word of words) {
    const last = lines.length - 1;
    const line = lines[last];
    if (line !== undefined && line.length + word.length + 2 <= width) lines[last] = `${line}, ${word}`;
    else lines.push(`${indent}${word}`);
  }
  return lines.join(',\n');
}
