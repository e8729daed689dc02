import { execFile as execFileCallback, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { z } from 'zod';

const execFile = promisify(execFileCallback);

export const HARNESS_DIR = 'test/cluster/harness';

/** Absolute paths of what build-binaries.sh built (or found in its cache). */
export const ToolsSchema = z.object({
  KUBE_APISERVER: z.string(),
  KUBE_CONTROLLER_MANAGER: z.string(),
  KUBE_SCHEDULER: z.string(),
  KUBECTL: z.string(),
  ETCD: z.string(),
  KWOK: z.string(),
  KWOKCTL: z.string(),
  HELM: z.string(),
  MOTO_SERVER: z.string(),
  TOOLS_PATH: z.string(),
});
export type Tools = z.infer<typeof ToolsSchema>;

/** What `build-binaries.sh --real-node` adds: the binaries of a real node beside the KWOK ones. */
export const RealNodeToolsSchema = ToolsSchema.extend({
  KUBELET: z.string(),
  KUBE_PROXY: z.string(),
  KUBE_ROUTER: z.string(),
  LOCAL_PATH_PROVISIONER: z.string(),
  COREDNS: z.string(),
  PAUSE: z.string(),
});
export type RealNodeTools = z.infer<typeof RealNodeToolsSchema>;

export class HarnessError extends Error {
  override name = 'HarnessError';
}

async function requireCommand(command: string, advice: string, env: NodeJS.ProcessEnv): Promise<void> {
  try {
    await execFile(command, ['version'], { timeout: 30_000, env });
  } catch (err) {
    throw new HarnessError(`the cluster tests need ${command}: ${advice}`, { cause: err });
  }
}

async function runBuildScript(
  outFile: string,
  extraArgs: string[],
  env: NodeJS.ProcessEnv,
): Promise<string[]> {
  await requireCommand(
    'go',
    'install Go 1.26 or newer (Debian: apt-get install golang-go; or https://go.dev/dl)',
    env,
  );
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(
      'bash',
      [`${HARNESS_DIR}/build-binaries.sh`, '--moto', ...extraArgs, '--out', outFile],
      { stdio: ['ignore', 'ignore', 'inherit'], env },
    );
    child.once('error', reject);
    child.once('exit', resolve);
  });
  if (exitCode !== 0) {
    throw new HarnessError(
      `build-binaries.sh failed (exit ${String(exitCode)}); it needs Go 1.26+, python3 with venv (apt-get install python3-venv) and the Go module proxy and PyPI${extraArgs.length > 0 ? ', and gcc with a static libc (apt-get install gcc libc6-dev) for the pause binary' : ''}`,
    );
  }
  return (await readFile(outFile, 'utf8')).split('\n').filter((line) => line.includes('='));
}

const linesToEntries = (lines: string[]): Record<string, string> =>
  Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );

/**
 * Builds the control-plane binaries from Go modules, or reuses them from the cache outside the
 * repository (a cold build takes ~15 minutes on 2 cores, a warm one about a second).
 */
export async function buildTools(outFile: string, env: NodeJS.ProcessEnv = process.env): Promise<Tools> {
  return ToolsSchema.parse(linesToEntries(await runBuildScript(outFile, [], env)));
}

/** The control plane plus a real node's binaries (kubelet, kube-proxy, kube-router, …). */
export async function buildRealNodeTools(
  outFile: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<RealNodeTools> {
  return RealNodeToolsSchema.parse(linesToEntries(await runBuildScript(outFile, ['--real-node'], env)));
}

/** Runs a command to completion, failing with its stderr. */
export async function run(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: options.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 180_000);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else
        reject(new HarnessError(`${command} ${args.join(' ')} failed (${String(code)}): ${stderr.trim()}`));
    });
    // A command that exits without reading its input (kubectl create token, helm) closes the pipe
    // first: EPIPE on stdin is no failure of the command, whose exit code decides.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}
