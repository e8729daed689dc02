// The node's two local images, built with buildah from scratch (no registry is reachable): the pause
// image containerd's sandboxes need, and a busybox image for test pods and local-path's helper pods.
import { mkdir, rm, symlink, copyFile, chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { run } from '../../cluster/harness/tools.js';
import { BUSYBOX } from './host.js';
import { BUSYBOX_IMAGE, PAUSE_IMAGE } from './layout.js';
import type { NodePaths } from './layout.js';

/** buildah with storage of its own under the workdir (vfs: plain directories, no mounts to undo). */
function buildah(paths: NodePaths, args: string[]): Promise<string> {
  return run(
    'buildah',
    [
      '--root',
      join(paths.buildah, 'root'),
      '--runroot',
      join(paths.buildah, 'run'),
      '--storage-driver',
      'vfs',
      ...args,
    ],
    // crun fails on this cgroup-v1 host ("cgroups in hybrid mode not supported").
    { env: { ...process.env, BUILDAH_RUNTIME: '/usr/sbin/runc' } },
  );
}

interface ImageSpec {
  name: string;
  /** A directory whose contents become the image's root filesystem. */
  rootfs: string;
  config: string[];
}

/** Builds an image from a directory and writes it as a docker-archive; returns the archive path. */
async function buildArchive(paths: NodePaths, spec: ImageSpec, file: string): Promise<string> {
  const container = (await buildah(paths, ['from', 'scratch'])).trim();
  await buildah(paths, ['add', container, `${spec.rootfs}/`, '/']);
  await buildah(paths, ['config', ...spec.config, container]);
  await buildah(paths, ['commit', '--format', 'docker', container, spec.name]);
  await buildah(paths, ['rm', container]);
  await mkdir(paths.images, { recursive: true });
  const archive = join(paths.images, file);
  await buildah(paths, ['push', spec.name, `docker-archive:${archive}:${spec.name}`]);
  return archive;
}

async function pauseRootfs(dir: string, pauseBinary: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await copyFile(pauseBinary, join(dir, 'pause'));
  await chmod(join(dir, 'pause'), 0o755);
}

/** The test image's HTTP client (see probe/main.go for why busybox's wget will not do). */
export const PROBE = '/bin/agentry-probe';
const PROBE_SOURCE = 'test/realnode/harness/probe';

async function buildProbe(output: string): Promise<void> {
  await run('go', ['-C', PROBE_SOURCE, 'build', '-trimpath', '-ldflags', '-s -w', '-o', output, '.'], {
    env: { ...process.env, CGO_ENABLED: '0', GOTOOLCHAIN: 'local' },
  });
}

/** busybox plus a link per applet in /bin, the probe, and the directories a shell expects. */
async function busyboxRootfs(dir: string): Promise<void> {
  await mkdir(join(dir, 'bin'), { recursive: true });
  for (const empty of ['tmp', 'etc', 'root', 'var', 'proc', 'sys', 'dev']) {
    await mkdir(join(dir, empty), { recursive: true });
  }
  await chmod(join(dir, 'tmp'), 0o1777);
  await copyFile(BUSYBOX, join(dir, 'bin', 'busybox'));
  await chmod(join(dir, 'bin', 'busybox'), 0o755);
  const applets = (await run(BUSYBOX, ['--list'])).split('\n').filter((name) => /^[\w.[-]+$/.test(name));
  for (const applet of applets) {
    if (applet !== 'busybox') await symlink('busybox', join(dir, 'bin', applet));
  }
  await buildProbe(join(dir, PROBE));
}

/** Builds both images; returns their docker-archive paths, ready for `ctr images import`. */
export async function buildNodeImages(paths: NodePaths, pauseBinary: string): Promise<string[]> {
  const staging = join(paths.images, 'rootfs');
  await pauseRootfs(join(staging, 'pause'), pauseBinary);
  await busyboxRootfs(join(staging, 'busybox'));
  const images: [ImageSpec, string][] = [
    [
      {
        name: PAUSE_IMAGE,
        rootfs: join(staging, 'pause'),
        config: ['--entrypoint', '["/pause"]', '--user', '65535:65535'],
      },
      'pause.tar',
    ],
    [
      {
        name: BUSYBOX_IMAGE,
        rootfs: join(staging, 'busybox'),
        config: ['--cmd', '["sh"]', '--env', 'PATH=/bin'],
      },
      'busybox.tar',
    ],
  ];
  const archives: string[] = [];
  for (const [spec, file] of images) archives.push(await buildArchive(paths, spec, file));
  await rm(staging, { recursive: true, force: true });
  // The archives are all containerd needs; buildah's own storage would only take disk space.
  await rm(paths.buildah, { recursive: true, force: true });
  return archives;
}
