import { parseJson } from '../platform/json.js';
import { errnoOf } from '../platform/errno.js';
import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { Logger } from '../platform/log.js';
import {
  DispatchPromptRequestSchema,
  PromptStateSchema,
  RunnerIdSchema,
  RunnerTaskIdSchema,
  isTerminalPromptStatus,
} from '../platform/runner-protocol.js';
import type { DispatchPrompt, PromptState } from '../platform/runner-protocol.js';
import { syncMadeDirectories, syncPath } from './event-log-file.js';

/** What the runner keeps of one prompt: `<stateDir>/tasks/<taskId>/prompts/<promptId>.json`. */
export interface PromptRecord {
  /** Order of acceptance across every task of this runner: the queue's FIFO order after a restart. */
  sequence: number;
  request: DispatchPrompt;
  state: PromptState;
}

const PromptRecordFileSchema = z.object({
  version: z.literal(1),
  sequence: z.number().int().min(0),
  request: DispatchPromptRequestSchema,
  state: PromptStateSchema,
});

const isId = (value: string): boolean => RunnerIdSchema.safeParse(value).success;
const isTaskId = (value: string): boolean => RunnerTaskIdSchema.safeParse(value).success;

async function listDir(path: string): Promise<string[]> {
  try {
    return await readdir(path);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT' || errnoOf(err) === 'ENOTDIR') return [];
    throw new Error(`cannot list ${path}`, { cause: err });
  }
}

/**
 * Once a prompt is over its executor's environment (API keys) is not needed again: the record
 * keeps the request for the record's sake, without secrets at rest.
 */
const withoutSecrets = (record: PromptRecord): PromptRecord =>
  isTerminalPromptStatus(record.state.status)
    ? { ...record, request: { ...record.request, executor: { ...record.request.executor, env: {} } } }
    : record;

/**
 * Prompt records on the workspace disk. Each write goes to a temporary file (mode 0600: the request
 * holds the executor's API keys), is fsynced and renamed over the record, so a reader or a restart
 * finds the old record or the new one, never half of one.
 */
export class PromptRecordStore {
  constructor(
    private readonly stateDir: string,
    private readonly logger: Logger,
  ) {}

  pathOf(taskId: string, promptId: string): string {
    if (!isTaskId(taskId) || !isId(promptId))
      throw new Error('prompt records need a task name and a UUID prompt id');
    return join(this.stateDir, 'tasks', taskId, 'prompts', `${promptId}.json`);
  }

  async write(record: PromptRecord): Promise<void> {
    const path = this.pathOf(record.state.taskId, record.state.promptId);
    const dir = dirname(path);
    const temporary = `${path}.${randomUUID()}.tmp`;
    const body = { version: 1, ...withoutSecrets(record) };
    try {
      const created = await mkdir(dir, { recursive: true, mode: 0o700 });
      const file = await open(temporary, 'wx', 0o600);
      try {
        await file.writeFile(`${JSON.stringify(body)}\n`, 'utf8');
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temporary, path);
      await syncPath(dir);
      await syncMadeDirectories(created, dir);
    } catch (err) {
      await rm(temporary, { force: true });
      throw new Error(`cannot write the prompt record ${path}`, { cause: err });
    }
  }

  /** Every readable record; unreadable ones are logged and skipped, stale temporary files removed. */
  async loadAll(): Promise<PromptRecord[]> {
    const records: PromptRecord[] = [];
    const tasksDir = join(this.stateDir, 'tasks');
    for (const taskId of await listDir(tasksDir)) {
      if (!isTaskId(taskId)) continue;
      const promptsDir = join(tasksDir, taskId, 'prompts');
      for (const name of await listDir(promptsDir)) {
        const record = await this.loadOne(join(promptsDir, name), taskId, name);
        if (record !== undefined) records.push(record);
      }
    }
    return records.sort((a, b) => a.sequence - b.sequence);
  }

  private async loadOne(path: string, taskId: string, name: string): Promise<PromptRecord | undefined> {
    if (name.endsWith('.tmp')) {
      await rm(path, { force: true }); // a write interrupted by a crash, never renamed into place
      return undefined;
    }
    if (!name.endsWith('.json') || !isId(name.slice(0, -'.json'.length))) return undefined;
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      this.logger.error({ err, path }, 'cannot read a prompt record; it is ignored');
      return undefined;
    }
    const parsed = PromptRecordFileSchema.safeParse(parseJson(text));
    // Never log the parse error itself: V8 quotes the text, and the record holds API keys.
    if (!parsed.success || parsed.data.state.taskId !== taskId) {
      this.logger.error({ path }, 'a prompt record is not valid; it is ignored');
      return undefined;
    }
    const { sequence, request, state } = parsed.data;
    return { sequence, request, state };
  }
}
