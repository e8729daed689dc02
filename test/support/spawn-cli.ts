import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';

/** Runs `agentry` from source (TypeScript through the swc loader) as a real child process. */
export function spawnAgentry(args: string[], env: Record<string, string>): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['--import', './test/support/register-swc.mjs', 'cli/main.ts', ...args], {
    // Any free port for the embedded egress proxy: parallel servers must not race for 3128.
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      AGENTRY_EGRESS_PROXY_PORT: '0',
      ...env,
    },
    stdio: 'pipe',
  });
}

/** Collects a child's output and resolves when `pattern` matches its stdout. */
export function waitForOutput(
  child: ChildProcessWithoutNullStreams,
  pattern: RegExp,
  timeoutMs = 30_000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      reject(new Error(`no ${String(pattern)} within ${timeoutMs} ms; stdout: ${stdout}; stderr: ${stderr}`));
    }, timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (pattern.test(stdout)) {
        clearTimeout(timer);
        resolve(stdout);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(
        new Error(
          `exited with ${String(code)} before ${String(pattern)}; stdout: ${stdout}; stderr: ${stderr}`,
        ),
      );
    });
  });
}

/** Starts collecting a child's output (draining its pipes, so a chatty child never blocks); call to read it so far. */
export function collectOutput(
  child: ChildProcessWithoutNullStreams,
): () => { stdout: string; stderr: string } {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return () => ({ stdout, stderr });
}

/** The structured log lines (pino JSON) at level error or above in `text`. */
export function errorLogLines(text: string): string[] {
  return text.split('\n').filter((line) => {
    try {
      const record: unknown = JSON.parse(line);
      return typeof record === 'object' && record !== null && 'level' in record && Number(record.level) >= 50;
    } catch {
      return false;
    }
  });
}

/** Runs a short command to completion. */
export function runAgentry(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnAgentry(args, env);
  const output = collectOutput(child);
  return new Promise((resolve) => {
    child.once('exit', (code) => {
      resolve({ code, ...output() });
    });
  });
}

export async function stopChild(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  return exited;
}

const SERVING = /serving at (http:\/\/[0-9.:]+)\/v1/;

/** `agentry serve` as a child process on a free port; resolves with its base URL once it serves. */
export async function startServeProcess(
  env: Record<string, string>,
): Promise<{ url: string; child: ChildProcessWithoutNullStreams }> {
  const child = spawnAgentry(['serve'], { AGENTRY_PORT: '0', AGENTRY_LOG_LEVEL: 'warn', ...env });
  const out = await waitForOutput(child, SERVING, 60_000);
  const url = SERVING.exec(out)?.[1];
  if (url === undefined) throw new Error(`no url in ${out}`);
  return { url, child };
}

/** kill -9, and wait until it is gone. */
export async function killHard(child: ChildProcessWithoutNullStreams): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}
