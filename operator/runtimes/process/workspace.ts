import { randomUUID } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { errnoOf } from './errors.js';

/** Where one workspace of the process runtime lives on disk. */
export interface WorkspacePaths {
  /** `<dataDir>/workspaces/<namespace>/<name>`: removed with the agent computer. */
  root: string;
  /** The runner's working directory (its `/code`); survives hibernation and redeploys. */
  code: string;
  /** The runner's own state (event logs, prompt records): beside `code`, kept with it. */
  state: string;
  /** The runner last started for it, so that a restarted operator can adopt it. */
  record: string;
  /** The runner's stdout and stderr (JSON logs and the listening line); the previous run's beside it. */
  log: string;
  previousLog: string;
}

/** A Kubernetes name or namespace; anything else (`..`, `/`) must never become a path segment. */
const SEGMENT = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

export function workspacePaths(dataDir: string, namespace: string, name: string): WorkspacePaths {
  for (const [what, value] of [
    ['namespace', namespace],
    ['name', name],
  ] as const) {
    if (!SEGMENT.test(value))
      throw new Error(`agent computer ${what} "${value}" is not a valid Kubernetes name`);
  }
  const root = join(resolve(dataDir), 'workspaces', namespace, name);
  return {
    root,
    code: join(root, 'code'),
    state: join(root, 'state'),
    record: join(root, 'runner.json'),
    log: join(root, 'runner.log'),
    previousLog: join(root, 'runner.previous.log'),
  };
}

/** `runner.json`: enough to find, verify and adopt a runner after the operator restarts. */
export const RunnerRecordSchema = z.object({
  pid: z.number().int().positive(),
  /** Null until the runner has printed its listening line. */
  port: z.number().int().min(1).max(65535).nullable(),
  startedAt: z.string(),
  /** `spec.restartedAt` the runner was started for; a different one means redeploy. */
  restartedAt: z.string().nullable(),
});
export type RunnerRecord = z.infer<typeof RunnerRecordSchema>;

/** The record, or undefined when there is none or it cannot be parsed (then it is not trusted). */
export async function readRunnerRecord(path: string): Promise<RunnerRecord | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return undefined;
    throw new Error(`cannot read ${path}`, { cause: err });
  }
  try {
    const parsed = RunnerRecordSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined; // not JSON: treated like no record
  }
}

/** Written to a temporary file and renamed, so a reader never sees half a record. */
export async function writeRunnerRecord(path: string, record: RunnerRecord): Promise<void> {
  const temporary = `${path}.${randomUUID()}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(record)}\n`, { mode: 0o600 });
    await rename(temporary, path);
  } catch (err) {
    await rm(temporary, { force: true });
    throw new Error(`cannot write ${path}`, { cause: err });
  }
}

export async function deleteRunnerRecord(path: string): Promise<void> {
  await rm(path, { force: true });
}
