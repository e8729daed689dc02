// images/debian-sources.sh: the Debian mirror the base image is built from, read from apt's own
// sources lists (deb822 and one-line formats) rather than written down in the repository.
import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const SCRIPT = resolve('images/debian-sources.sh');
const { DEBIAN_MIRROR: _mirror, ...withoutMirror } = process.env;

/** The script's output for `suite`, given sources-list files by name and content. */
async function debianSources(
  suite: string,
  files: Record<string, string>,
  env: NodeJS.ProcessEnv = withoutMirror,
): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'agentry-apt-sources-'));
  try {
    const paths = await Promise.all(
      Object.entries(files).map(async ([name, text]) => {
        await writeFile(join(dir, name), text);
        return join(dir, name);
      }),
    );
    const { stdout } = await promisify(execFile)(SCRIPT, [suite, ...paths], { env });
    return stdout.split('\n').filter((line) => line !== '');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const DEB822 = `Types: deb
# a snapshot would go here
URIs: http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://src.example/debian
Suites: bookworm
Components: main

Types: deb
URIs: http://mirror.example/debian-security
Suites: bookworm-security
Components: main
`;

describe('images/debian-sources.sh', () => {
  it('names only DEBIAN_MIRROR for the suite when it is set', async () => {
    const env = { ...withoutMirror, DEBIAN_MIRROR: 'http://mirror.example/debian' };
    expect(await debianSources('bookworm', { 'debian.sources': DEB822 }, env)).toEqual([
      'deb http://mirror.example/debian bookworm main',
    ]);
  });

  it('reads the suite, its updates and its security source from a deb822 file, skipping deb-src', async () => {
    expect(await debianSources('bookworm', { 'debian.sources': DEB822 })).toEqual([
      'deb http://mirror.example/debian bookworm main',
      'deb http://mirror.example/debian bookworm-updates main',
      'deb http://mirror.example/debian-security bookworm-security main',
    ]);
  });

  it('reads one-line entries with options and ignores sources of other suites', async () => {
    const list = [
      'deb https://packages.example/apt cloud-sdk-bookworm main',
      '# deb http://commented.example/debian bookworm main',
      'deb [arch=amd64 signed-by=/usr/share/keyrings/x.gpg] http://mirror.example/debian bookworm main contrib',
    ].join('\n');
    expect(await debianSources('bookworm', { 'sources.list': list })).toEqual([
      'deb http://mirror.example/debian bookworm main',
    ]);
  });

  it('keeps the first source of a suite when several files list it', async () => {
    const sources = await debianSources('bookworm', {
      'a.list': 'deb http://first.example/debian bookworm main\n',
      'b.sources': DEB822,
    });
    expect(sources.filter((line) => line.endsWith(' bookworm main'))).toEqual([
      'deb http://first.example/debian bookworm main',
    ]);
  });

  it('prints nothing for a suite no source lists', async () => {
    expect(await debianSources('trixie', { 'debian.sources': DEB822 })).toEqual([]);
  });
});
