// `agentry api` as shipped (dist/cli/main.js, no loader) on the bench's cluster, its JSON log lines
// written to a file as a container runtime takes stdout, and the CPU of its whole process tree
// (the primary and its workers) read from /proc.
import { spawn } from 'node:child_process';
import { open, readFile } from 'node:fs/promises';
import { processUsage } from '../peer-start/process-usage.js';
import { until } from '../../test/support/until.js';

export interface BuiltApi {
  pid: number;
  /** The processes that serve: AGENTRY_API_WORKERS as resolved (`auto` becomes a count). */
  workers: number;
  /** User + system CPU seconds of the primary and every worker so far. */
  cpuSeconds(): Promise<number>;
  /** SIGTERM, and its exit. */
  stop(): Promise<void>;
}

const count = (text: string, msg: string): number => text.split(`"msg":"${msg}"`).length - 1;

/** The primary's `workers` field, when there is a primary (workers above 1). */
const primaryWorkers = (text: string): number | undefined => {
  const line = text.split('\n').find((each) => each.includes('"msg":"api primary started"'));
  const match = line === undefined ? null : /"workers":(\d+)/.exec(line);
  return match === null ? undefined : Number(match[1]);
};

async function childrenOf(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${String(pid)}/task/${String(pid)}/children`, 'utf8').catch(() => '');
  return text
    .trim()
    .split(/\s+/)
    .filter((each) => each !== '')
    .map(Number);
}

export async function startBuiltApi(options: {
  kubeconfig: string;
  controlNamespace: string;
  port: number;
  workers: string;
  logFile: string;
}): Promise<BuiltApi> {
  const log = await open(options.logFile, 'w');
  const child = spawn(process.execPath, ['dist/cli/main.js', 'api'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      KUBECONFIG: options.kubeconfig,
      AGENTRY_STORE: 'kubernetes',
      AGENTRY_NAMESPACE: options.controlNamespace,
      AGENTRY_HOST: '127.0.0.1',
      AGENTRY_PORT: String(options.port),
      AGENTRY_API_WORKERS: options.workers,
      AGENTRY_LOG_LEVEL: 'info',
    },
    stdio: ['ignore', log.fd, log.fd],
  });
  await log.close();
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      resolve();
    }),
  );
  const pid = child.pid;
  if (pid === undefined) throw new Error('agentry api did not start');
  const workers = await until(
    `agentry api (${options.workers} workers) serving`,
    async () => {
      if (child.exitCode !== null) throw new Error(`agentry api exited; see ${options.logFile}`);
      const text = await readFile(options.logFile, 'utf8');
      const expected = primaryWorkers(text) ?? 1;
      return count(text, 'api serving') >= expected ? expected : undefined;
    },
    120_000,
    200,
  );
  return {
    pid,
    workers,
    async cpuSeconds() {
      const pids = [pid, ...(await childrenOf(pid))];
      const usages = await Promise.all(pids.map((each) => processUsage(each)));
      return usages.reduce((sum, usage) => sum + usage.cpuSeconds, 0);
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
