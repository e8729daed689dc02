import { readFile, rm, writeFile } from 'node:fs/promises';
import { workspaceFilePath } from './workspace-files.js';

/**
 * The workspace's agent instructions in the file its executor reads (CLAUDE.md, AGENTS.md …), as a
 * marked section appended to whatever the repository has there: the repository's own text is never
 * touched, and new instructions replace the section rather than adding another.
 */

export const INSTRUCTIONS_BEGIN =
  '<!-- agentry:agent-instructions:begin (written by Agentry; edits here are replaced) -->';
export const INSTRUCTIONS_END = '<!-- agentry:agent-instructions:end -->';

const errnoCode = (err: unknown): unknown =>
  typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return undefined;
    throw err;
  }
}

/** The text without Agentry's section (and the blank line that separated it). */
export function withoutSection(text: string): string {
  const begin = text.indexOf(INSTRUCTIONS_BEGIN);
  if (begin < 0) return text;
  const endMarker = text.indexOf(INSTRUCTIONS_END, begin);
  const end = endMarker < 0 ? text.length : endMarker + INSTRUCTIONS_END.length;
  const before = text.slice(0, begin).replace(/\n*$/, '');
  const after = text.slice(end).replace(/^\n+/, '');
  if (before === '') return after;
  return after === '' ? `${before}\n` : `${before}\n\n${after}`;
}

/** The text with `instructions` as Agentry's section at the end (replacing an earlier one). */
export function withSection(text: string, instructions: string): string {
  const base = withoutSection(text).replace(/\n*$/, '');
  const section = `${INSTRUCTIONS_BEGIN}\n${instructions.replace(/\n*$/, '')}\n${INSTRUCTIONS_END}\n`;
  return base === '' ? section : `${base}\n\n${section}`;
}

/**
 * Brings `<workdir>/<file>` in line with the instructions: writes or replaces the section, or
 * (instructions undefined) removes it, deleting the file when nothing else was in it.
 */
export async function syncAgentInstructions(
  workdir: string,
  file: string,
  instructions: string | undefined,
): Promise<void> {
  const path = workspaceFilePath(workdir, file);
  const current = await readIfExists(path);
  if (instructions === undefined) {
    if (current === undefined || !current.includes(INSTRUCTIONS_BEGIN)) return;
    const rest = withoutSection(current);
    if (rest.trim() === '') await rm(path, { force: true });
    else await writeFile(path, rest, 'utf8');
    return;
  }
  const next = withSection(current ?? '', instructions);
  if (next !== current) await writeFile(path, next, 'utf8');
}
