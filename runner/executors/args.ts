import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ExecutorInvocation } from '../../platform/runner-protocol.js';

/** The values of an invocation's placeholders; `model` undefined drops the argument naming it. */
export interface PlaceholderValues {
  prompt: string;
  promptFile: string | undefined;
  model: string | undefined;
}

const PLACEHOLDER = /\{(prompt|promptFile|model)\}/g;

/**
 * Replaces `{prompt}`, `{promptFile}` and `{model}` in one pass, so a prompt that itself contains
 * `{model}` stays as written. Without a model, an argument naming `{model}` is dropped together
 * with the flag right before it (`--model {model}` disappears; `--model={model}` too).
 */
export function substituteArgs(args: readonly string[], values: PlaceholderValues): string[] {
  const out: string[] = [];
  args.forEach((arg, index) => {
    if (values.model === undefined && arg.includes('{model}')) {
      const previous = args[index - 1];
      if (previous?.startsWith('-') === true && out.at(-1) === previous) out.pop();
      return;
    }
    out.push(arg.replace(PLACEHOLDER, (_match, name: string) => placeholderValue(name, values)));
  });
  return out;
}

function placeholderValue(name: string, values: PlaceholderValues): string {
  if (name === 'prompt') return values.prompt;
  if (name === 'model') return values.model ?? '';
  if (values.promptFile === undefined) throw new Error('{promptFile} is used but no prompt file was written');
  return values.promptFile;
}

/** Writes the prompt file when the invocation reads one; its path, or undefined. */
export async function writePromptFile(
  invocation: ExecutorInvocation,
  prompt: string,
  scratchDir: string,
): Promise<string | undefined> {
  const wanted = invocation.promptVia === 'file' || invocation.args.some((a) => a.includes('{promptFile}'));
  if (!wanted) return undefined;
  const path = join(scratchDir, 'prompt');
  try {
    // 0600: the prompt may hold secrets the user pasted. A mode only applies to a new file, so an
    // old one (a retried prompt) is removed first and `wx` refuses anything created in between.
    await rm(path, { force: true });
    await writeFile(path, prompt, { encoding: 'utf8', mode: 0o600, flag: 'wx' });
  } catch (err) {
    throw new Error(`writing the prompt file ${path}`, { cause: err });
  }
  return path;
}

/** The only variables an executor inherits from the runner; everything else comes from its invocation. */
export const INHERITED_ENV = ['PATH', 'HOME', 'LANG', 'TZ', 'TMPDIR', 'USER'] as const;

/** The executor's environment: a minimal base from the runner's own, then the invocation's values. */
export function executorEnv(
  base: Readonly<Record<string, string | undefined>>,
  invocation: ExecutorInvocation,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED_ENV) {
    const value = base[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...invocation.env };
}
