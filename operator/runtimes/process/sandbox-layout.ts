import { existsSync, lstatSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { dirname, join, parse } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * What of the host a confined program sees besides its own directories: the system directories
 * programs need, read-only. Everything else (the data directory, other workloads, the server's
 * files, /root, /home, /var) does not exist inside the sandbox.
 */

/** Top-level system directories, bound read-only where they are directories, recreated where they are symlinks (merged /usr). */
export const SYSTEM_DIRECTORIES = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'] as const;

/**
 * The parts of /etc programs need (users, name resolution, TLS roots, git and ssh client
 * configuration, the dynamic linker, alternatives). An allow-list: /etc/shadow, /etc/ssl/private,
 * /etc/ssh host keys and whatever else an installation keeps in /etc stay out.
 */
export const ETC_ENTRIES = [
  'passwd',
  'group',
  'hosts',
  'hostname',
  'resolv.conf',
  'nsswitch.conf',
  'host.conf',
  'gai.conf',
  'services',
  'protocols',
  'localtime',
  'timezone',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'alternatives',
  'ssl/certs',
  'ssl/openssl.cnf',
  'ca-certificates',
  'ca-certificates.conf',
  'pki/ca-trust',
  'pki/tls/certs',
  'gitconfig',
  'ssh/ssh_config',
  'ssh/ssh_config.d',
  'ssh/ssh_known_hosts',
  'bash.bashrc',
  'profile',
  'profile.d',
  'inputrc',
  'shells',
  'mime.types',
  'os-release',
  'debian_version',
  'lsb-release',
  'terminfo',
  'locale.alias',
].map((entry) => `/etc/${entry}`);

/** A top-level system path as it is on this host: a directory to bind, a symlink to recreate, or absent. */
export type SystemPath =
  | { kind: 'directory'; path: string }
  | { kind: 'symlink'; path: string; target: string }
  | { kind: 'absent'; path: string };

export function systemPath(path: string): SystemPath {
  try {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return { kind: 'symlink', path, target: readlinkSync(path) };
    return stat.isDirectory() ? { kind: 'directory', path } : { kind: 'absent', path };
  } catch {
    return { kind: 'absent', path };
  }
}

/** The directory holding Agentry's package.json (its code and node_modules), found from this module. */
export function agentryPackageRoot(from: string = fileURLToPath(import.meta.url)): string {
  for (let dir = dirname(from); dir !== parse(dir).root; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'node_modules'))) return dir;
  }
  throw new Error('cannot find the agentry package root (package.json beside node_modules)');
}

/**
 * The code a confined program runs, read-only: each top-level entry of the package root except
 * dot-files (.git, .env), so that secrets kept beside a checkout stay out; the node installation
 * (its `bin/node` and globally installed CLIs) unless it already lies in /usr.
 */
export function codePaths(packageRoot: string, nodeBinary: string = process.execPath): string[] {
  const entries = readdirSync(packageRoot)
    .filter((entry) => !entry.startsWith('.'))
    .map((entry) => join(packageRoot, entry));
  const node = realpathSync(nodeBinary);
  const prefix = dirname(dirname(node));
  const nodePaths = node.startsWith('/usr/') ? [] : [prefix === parse(prefix).root ? node : prefix];
  return [...entries, ...nodePaths];
}

/** Whether `path` is `directory` or lies beneath it (by path segments, not string prefix). */
export const isWithin = (path: string, directory: string): boolean =>
  path === directory || path.startsWith(directory.endsWith('/') ? directory : `${directory}/`);
