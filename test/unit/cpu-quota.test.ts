import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { cgroupCpuLimit, cgroupPathOf, cpusOfCpuMax, usableCpus } from '../../platform/cpu-quota.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A fake /sys/fs/cgroup with `cpu.max` files at the given paths, and a /proc/self/cgroup naming `own`. */
async function cgroupTree(
  own: string,
  limits: Record<string, string>,
): Promise<{ cgroupRoot: string; procSelfCgroup: string }> {
  const root = await mkdtemp(join(tmpdir(), 'agentry-cgroup-'));
  dirs.push(root);
  const cgroupRoot = join(root, 'sys');
  await mkdir(join(cgroupRoot, own), { recursive: true });
  for (const [path, text] of Object.entries(limits)) await writeFile(join(cgroupRoot, path, 'cpu.max'), text);
  const procSelfCgroup = join(root, 'cgroup');
  await writeFile(procSelfCgroup, `0::${own}\n`);
  return { cgroupRoot, procSelfCgroup };
}

describe('the CPUs AGENTRY_API_WORKERS=auto uses', () => {
  it('reads a cgroup v2 quota as its CPUs, rounded up', () => {
    expect(cpusOfCpuMax('200000 100000\n')).toBe(2);
    expect(cpusOfCpuMax('150000 100000')).toBe(2);
    expect(cpusOfCpuMax('50000 100000')).toBe(1);
  });

  it('reads "max" as no limit', () => {
    expect(cpusOfCpuMax('max 100000\n')).toBeUndefined();
  });

  it('finds the cgroup v2 path of the process, and none on cgroup v1', () => {
    expect(cgroupPathOf('0::/kubepods/pod1/abc\n')).toBe('/kubepods/pod1/abc');
    expect(cgroupPathOf('0::/\n')).toBe('/');
    expect(cgroupPathOf('12:cpu,cpuacct:/docker/abc\n')).toBeUndefined();
  });

  it("takes the tightest limit between the process's cgroup and the root", async () => {
    const files = await cgroupTree('/pod/container', {
      '/': 'max 100000',
      '/pod': '300000 100000',
      '/pod/container': 'max 100000',
    });
    expect(cgroupCpuLimit(files)).toBe(3);
  });

  it('has no limit when no cpu.max sets one', async () => {
    expect(cgroupCpuLimit(await cgroupTree('/', { '/': 'max 100000' }))).toBeUndefined();
    expect(cgroupCpuLimit({ cgroupRoot: '/nonexistent', procSelfCgroup: '/nonexistent' })).toBeUndefined();
  });

  it("uses the quota, never more than the machine's CPUs, and the machine's without one", () => {
    expect(usableCpus(1)).toBe(1);
    expect(usableCpus(availableParallelism() + 8)).toBe(availableParallelism());
    expect(usableCpus(undefined)).toBe(availableParallelism());
  });
});
