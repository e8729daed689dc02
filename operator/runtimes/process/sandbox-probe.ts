import { spawn } from 'node:child_process';
import { describeError } from '../../../platform/describe-error.js';
import { sandboxBaseArgs } from './sandbox.js';

/** What an administrator reads in the AgentComputer's status when confinement cannot work here. */
export const ISOLATION_UNAVAILABLE_MESSAGE =
  'workspaces run confined by bubblewrap, which cannot run on this machine: install it ' +
  '(Debian/Ubuntu: apt-get install bubblewrap; it needs user namespaces) or set ' +
  'AGENTRY_PROCESS_ISOLATION=none to run every workspace unconfined (single-tenant use only)';

export type SandboxProbe = { ok: true } | { ok: false; problem: string };

/**
 * Starts `true` in a sandbox made exactly like a workload's (same namespaces and system mounts):
 * a missing bwrap, user namespaces turned off or refused by the host (AppArmor, seccomp) all show
 * here, before any workload is started. `problem` is for the log; it may name host paths.
 */
export async function probeBubblewrap(bubblewrap: string, timeoutMs = 10_000): Promise<SandboxProbe> {
  return new Promise((resolve) => {
    let stderr = '';
    const child = spawn(bubblewrap, [...sandboxBaseArgs(), '--', 'true'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: timeoutMs,
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(0, 2000);
    });
    child.once('error', (err) => {
      resolve({ ok: false, problem: `cannot run bwrap: ${describeError(err)}` });
    });
    child.once('close', (code, signal) => {
      if (code === 0) resolve({ ok: true });
      else
        resolve({
          ok: false,
          problem: `bwrap ${signal === null ? `exited with code ${String(code)}` : `was killed by ${signal}`}: ${stderr.trim()}`,
        });
    });
  });
}
