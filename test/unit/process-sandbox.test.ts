import { describe, expect, it } from '@jest/globals';
import { bubblewrapArgs, workloadSandboxPlan } from '../../operator/runtimes/process/sandbox.js';
import { isWithin } from '../../operator/runtimes/process/sandbox-layout.js';
import { workspacePaths } from '../../operator/runtimes/process/workspace.js';

/** The mounts of an argument list, in order, as `flag path` (the destination). */
function mounts(args: string[]): string[] {
  const found: string[] = [];
  args.forEach((arg, i) => {
    if (arg === '--ro-bind' || arg === '--bind') found.push(`${arg} ${args[i + 2] ?? ''}`);
    if (arg === '--tmpfs') found.push(`${arg} ${args[i + 1] ?? ''}`);
  });
  return found;
}

const paths = workspacePaths('/srv/agentry/data', 'org-a', 'ws');

describe('bubblewrapArgs', () => {
  it('hides a data directory inside the agentry checkout, then binds the workspace over the hiding', () => {
    const plan = workloadSandboxPlan({
      paths,
      program: 'runner',
      dataDir: '/srv/agentry/data',
      readOnly: ['/srv/agentry'],
    });
    const order = mounts(bubblewrapArgs(plan)).filter((m) => m.includes('/srv/agentry'));
    expect(order).toEqual([
      '--ro-bind /srv/agentry',
      '--tmpfs /srv/agentry/data',
      `--bind ${paths.code}`,
      `--bind ${paths.state}`,
      `--bind ${paths.root}/home`,
      `--bind ${paths.root}/tmp`,
    ]);
  });

  it('regression: a data directory that is itself an entry of the checkout is hidden, not bound read-only', () => {
    const plan = workloadSandboxPlan({
      paths,
      program: 'runner',
      dataDir: '/srv/agentry/data',
      readOnly: ['/srv/agentry/api', '/srv/agentry/data', '/srv'],
    });
    const order = mounts(bubblewrapArgs(plan)).filter(
      (m) => m.endsWith('/srv/agentry/data') || m.endsWith('/srv'),
    );
    expect(order).toEqual(['--ro-bind /srv', '--tmpfs /srv/agentry/data']);
  });

  it('binds a readable directory inside the data directory after the hiding, read-only', () => {
    const plan = workloadSandboxPlan({
      paths,
      program: 'lake',
      dataDir: '/srv/agentry/data',
      readOnly: ['/srv/agentry', '/srv/agentry/data/lake-files/org-a'],
    });
    const order = mounts(bubblewrapArgs(plan)).filter((m) => m.includes('/srv/agentry'));
    expect(order.slice(0, 4)).toEqual([
      '--ro-bind /srv/agentry',
      '--tmpfs /srv/agentry/data',
      '--ro-bind /srv/agentry/data/lake-files/org-a',
      `--bind ${paths.code}`,
    ]);
  });

  it('never binds the data directory, the store or another workspace', () => {
    const plan = workloadSandboxPlan({
      paths,
      program: 'runner',
      dataDir: '/srv/agentry/data',
      readOnly: [],
    });
    const bound = mounts(bubblewrapArgs(plan)).map((m) => m.split(' ')[1] ?? '');
    expect(bound.filter((path) => isWithin(path, '/srv/agentry/data'))).toEqual([
      paths.code,
      paths.state,
      `${paths.root}/home`,
      `${paths.root}/tmp`,
    ]);
  });

  it('keeps the host network and drops every capability', () => {
    const args = bubblewrapArgs(
      workloadSandboxPlan({ paths, program: 'runner', dataDir: '/d', readOnly: [] }),
    );
    expect(args).not.toContain('--unshare-net');
    expect(args).not.toContain('--unshare-all');
    expect(args).toEqual(expect.arrayContaining(['--unshare-pid', '--unshare-user', '--disable-userns']));
    expect(args.join(' ')).toContain('--cap-drop ALL');
  });
});

describe('isWithin', () => {
  it('compares path segments, not string prefixes', () => {
    expect(isWithin('/data/ws', '/data')).toBe(true);
    expect(isWithin('/data', '/data')).toBe(true);
    expect(isWithin('/database', '/data')).toBe(false);
  });
});
