import { randomUUID } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { WORKDIR } from '../program-layout.js';
import type { WorkloadProgram } from '../types.js';
import { errnoOf } from '../../../platform/errno.js';

/** Where one workload of the process runtime lives on disk. */
export interface WorkspacePaths {
  /**
   * `<dataDir>/workspaces/<namespace>/<name>` (an agent computer) or `<dataDir>/lakes/<namespace>/<name>`
   * (a context lake): removed with the resource.
   */
  root: string;
  /**
   * The program's working directory, which survives hibernation and redeploys: the runner's `/code`,
   * or the lake server's data directory (DuckDB's files).
   */
  code: string;
  /** The runner's own state (event logs, prompt records): beside `code`, kept with it. Unused by the lake. */
  state: string;
  /** The process last started for it, so that a restarted operator can adopt it. */
  record: string;
  /** The process's stdout and stderr (JSON logs and the listening line); the previous run's beside it. */
  log: string;
  previousLog: string;
}

/** A Kubernetes name or namespace; anything else (`..`, `/`) must never become a path segment. */
const SEGMENT = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** The directory of one workload of a program: agent computers under `workspaces`, lakes under `lakes`. */
export function workloadPaths(
  dataDir: string,
  program: Pick<WorkloadProgram, 'name' | 'kind'>,
  namespace: string,
  name: string,
): WorkspacePaths {
  for (const [what, value] of [
    ['namespace', namespace],
    ['name', name],
  ] as const) {
    if (!SEGMENT.test(value))
      throw new Error(`${program.kind} ${what} "${value}" is not a valid Kubernetes name`);
  }
  const runner = program.name === 'runner';
  const root = join(resolve(dataDir), runner ? 'workspaces' : 'lakes', namespace, name);
  return {
    root,
    code: join(root, runner ? 'code' : 'data'),
    state: join(root, 'state'),
    record: join(root, `${program.name}.json`),
    log: join(root, `${program.name}.log`),
    previousLog: join(root, `${program.name}.previous.log`),
  };
}

/** The directory of an agent computer's workspace. */
export const workspacePaths = (dataDir: string, namespace: string, name: string): WorkspacePaths =>
  workloadPaths(dataDir, { name: 'runner', kind: 'AgentComputer' }, namespace, name);

/**
 * The environment variables that tell a program started by the process runtime where it works,
 * besides its token. One of them (`identity`) also proves after an operator restart that a live
 * pid is still this workload's process (see runnerIdentity).
 */
export function processEnvironment(
  program: Pick<WorkloadProgram, 'name'>,
  paths: WorkspacePaths,
): { env: Record<string, string>; identity: string } {
  if (program.name === 'runner') {
    return {
      env: {
        AGENTRY_RUNNER_PORT: '0',
        AGENTRY_RUNNER_HOST: '127.0.0.1',
        AGENTRY_RUNNER_WORKDIR: paths.code,
        // Events name the workspace's /code, never the data directory's path (docs/runtimes.md).
        AGENTRY_RUNNER_WORKDIR_SHOWN: WORKDIR,
        AGENTRY_RUNNER_STATE_DIR: paths.state,
      },
      identity: 'AGENTRY_RUNNER_WORKDIR',
    };
  }
  return {
    env: { AGENTRY_LAKE_PORT: '0', AGENTRY_LAKE_HOST: '127.0.0.1', AGENTRY_LAKE_DATA_DIR: paths.code },
    identity: 'AGENTRY_LAKE_DATA_DIR',
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
