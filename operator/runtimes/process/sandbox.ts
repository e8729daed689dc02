import { join } from 'node:path';
import type { RunnerCommand } from './child.js';
import { ETC_ENTRIES, SYSTEM_DIRECTORIES, isWithin, systemPath } from './sandbox-layout.js';
import type { WorkspacePaths } from './workspace.js';

/** What one confined program may see and write (docs/adr/0005-process-isolation-bubblewrap.md). */
export interface SandboxPlan {
  /** Writable, at the same path as on the host: the working directory and the runner's state. */
  writable: string[];
  /** Read-only beyond the system directories: the agentry code, the node installation, configured extras. */
  readOnly: string[];
  /** Shown empty where a read-only path would otherwise reveal them: the data directory. */
  hidden: string[];
  /** Writable `HOME` and `TMPDIR` of the program (inside the workload's directory, so they persist). */
  home: string;
  tmp: string;
  workdir: string;
}

/**
 * Namespaces: a user namespace (capabilities dropped, no nested ones, so no mount inside can be
 * undone), a PID namespace (the server and other workloads cannot be seen, signalled or read through
 * /proc), IPC, UTS and cgroup. The network namespace is the host's: the operator reaches the
 * program on a loopback port. `--die-with-parent` ties the sandbox to the shim below, not to the
 * operator.
 */
const NAMESPACE_FLAGS = [
  '--unshare-user',
  '--disable-userns',
  '--unshare-pid',
  '--unshare-ipc',
  '--unshare-uts',
  '--unshare-cgroup-try',
  '--cap-drop',
  'ALL',
  '--die-with-parent',
] as const;

/**
 * Namespaces, then the host's system directories and /etc allow-list read-only, with fresh /proc,
 * /dev and /tmp: every sandbox starts so (the availability probe runs exactly this).
 */
export function sandboxBaseArgs(): string[] {
  const args: string[] = [...NAMESPACE_FLAGS];
  for (const entry of SYSTEM_DIRECTORIES.map((path) => systemPath(path))) {
    if (entry.kind === 'directory') args.push('--ro-bind', entry.path, entry.path);
    if (entry.kind === 'symlink') args.push('--symlink', entry.target, entry.path);
  }
  for (const path of ETC_ENTRIES) args.push('--ro-bind-try', path, path);
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  return args;
}

/** bwrap's arguments up to `--`: namespaces, then mounts in order (later ones cover earlier ones). */
export function bubblewrapArgs(plan: SandboxPlan): string[] {
  const args = sandboxBaseArgs();
  // A readable path inside a hidden one (a dataset directory in the data directory) goes on top of the hiding.
  const insideHidden = (path: string) =>
    plan.hidden.some((hidden) => path !== hidden && isWithin(path, hidden));
  const readOnly = (paths: string[]) => paths.flatMap((path) => ['--ro-bind', path, path]);
  args.push(...readOnly(plan.readOnly.filter((path) => !insideHidden(path))));
  for (const path of plan.hidden) {
    if (plan.readOnly.some((readable) => isWithin(path, readable))) args.push('--tmpfs', path);
  }
  args.push(...readOnly(plan.readOnly.filter(insideHidden)));
  for (const path of [...plan.writable, plan.home, plan.tmp]) args.push('--bind', path, path);
  args.push('--setenv', 'HOME', plan.home, '--setenv', 'TMPDIR', plan.tmp, '--chdir', plan.workdir);
  return args;
}

/**
 * The plan for one workload of the process runtime: it writes its working directory (and the
 * runner its state) and nothing else of the data directory.
 */
export function workloadSandboxPlan(options: {
  paths: WorkspacePaths;
  program: 'runner' | 'lake';
  dataDir: string;
  readOnly: readonly string[];
}): SandboxPlan {
  const { paths } = options;
  return {
    writable: options.program === 'runner' ? [paths.code, paths.state] : [paths.code],
    // The data directory itself is never readable (the default `./data` is an entry of the checkout).
    readOnly: options.readOnly.filter((path) => path !== options.dataDir),
    hidden: [options.dataDir],
    home: join(paths.root, 'home'),
    tmp: join(paths.root, 'tmp'),
    workdir: paths.code,
  };
}

/**
 * `command` inside bwrap, behind a shell that ignores SIGTERM and waits (docs/adr/0005): the shell
 * is the process group leader the operator records and signals. SIGTERM to the group reaches the
 * program, which shuts down in its own time, while the shell and bwrap (which inherit the ignored
 * SIGTERM; node resets it) stay until it has exited; SIGKILL to the shell alone takes the whole
 * sandbox with it (`--die-with-parent`). The environment passes through bwrap unchanged.
 */
export function confinedCommand(
  command: RunnerCommand,
  plan: SandboxPlan,
  bubblewrap: string,
): RunnerCommand {
  return {
    wrapped: command.command,
    command: '/bin/sh',
    args: [
      '-c',
      'trap "" TERM; "$0" "$@"; exit $?',
      bubblewrap,
      ...bubblewrapArgs(plan),
      '--',
      command.command,
      ...command.args,
    ],
  };
}
