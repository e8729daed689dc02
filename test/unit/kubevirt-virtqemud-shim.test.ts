// images/kubevirt/virtqemud-shim.sh, /usr/sbin/virtqemud in the virt-launcher image, run for real
// with a fake libvirtd (it records its arguments and the configuration file it was given) and a
// temporary socket directory in place of /var/run/libvirt.
import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const SHIM = resolve('images/kubevirt/virtqemud-shim.sh');

// KubeVirt's cmd/virt-launcher/virtqemud.conf, plus a socket directory the shim must replace.
const VIRTQEMUD_CONF =
  'listen_tls = 0\nlisten_tcp = 0\nlog_outputs = "1:stderr"\nunix_sock_dir = "/elsewhere"\n';

const FAKE_LIBVIRTD = `#!/bin/sh
printf '%s\\n' "$@" > "$FAKE_LIBVIRTD_LOG.args"
cat "$2" > "$FAKE_LIBVIRTD_LOG.conf"
`;

const VIRTQEMUD_SOCKETS = ['virtqemud-sock', 'virtqemud-sock-ro', 'virtqemud-admin-sock'];

interface Outcome {
  code: number | null;
  stderr: string;
  sockDir: string;
  /** Where virtqemud's socket names point, read before the directory is removed ('' when not a link). */
  links: string[];
  args: string[];
  config: string;
}

async function runShim(args: (dir: string) => string[]): Promise<Outcome> {
  const dir = await mkdtemp(join(tmpdir(), 'agentry-virtqemud-shim-'));
  const sockDir = join(dir, 'run-libvirt');
  const log = join(dir, 'libvirtd');
  await writeFile(join(dir, 'libvirtd'), FAKE_LIBVIRTD, { mode: 0o755 });
  await writeFile(join(dir, 'virtqemud.conf'), VIRTQEMUD_CONF);
  const child = spawn(SHIM, args(dir), {
    env: {
      PATH: '/usr/bin:/bin',
      VIRTQEMUD_SHIM_LIBVIRTD: join(dir, 'libvirtd'),
      VIRTQEMUD_SHIM_SOCK_DIR: sockDir,
      FAKE_LIBVIRTD_LOG: log,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const code = await new Promise<number | null>((done) => child.once('close', done));
  const read = (file: string): Promise<string> => readFile(file, 'utf8').catch(() => '');
  const libvirtdArgs = (await read(`${log}.args`)).split('\n').filter((line) => line !== '');
  const config = await read(`${log}.conf`);
  const links = await Promise.all(
    VIRTQEMUD_SOCKETS.map((name) => readlink(join(sockDir, name)).catch(() => '')),
  );
  await rm(dir, { recursive: true, force: true });
  return { code, stderr, sockDir, links, args: libvirtdArgs, config };
}

describe('images/kubevirt/virtqemud-shim.sh', () => {
  it("starts libvirtd with virt-launcher's virtqemud.conf and the socket directory, passing other arguments through", async () => {
    const outcome = await runShim((dir) => ['-d', '-f', join(dir, 'virtqemud.conf'), '--verbose']);
    expect(outcome.code).toBe(0);
    expect(outcome.args).toEqual(['-f', join(outcome.sockDir, 'libvirtd-shim.conf'), '-d', '--verbose']);
    expect(outcome.config).toBe(
      `listen_tls = 0\nlisten_tcp = 0\nlog_outputs = "1:stderr"\nunix_sock_dir = "${outcome.sockDir}"\n`,
    );
  });

  it("links virtqemud's socket names to libvirtd's, so the session socket and qemu:///system reach one daemon", async () => {
    const outcome = await runShim((dir) => [`--config=${join(dir, 'virtqemud.conf')}`]);
    expect(outcome.code).toBe(0);
    expect(outcome.links).toEqual(['libvirt-sock', 'libvirt-sock-ro', 'libvirt-admin-sock']);
  });

  it('fails naming the configuration file when it cannot be read, and starts no libvirtd', async () => {
    const outcome = await runShim((dir) => ['-f', join(dir, 'missing.conf')]);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain('missing.conf');
    expect(outcome.args).toEqual([]);
  });
});
