// The three images' Dockerfiles, read as text: their shared stages must stay identical (buildah's
// and Docker's layer caches then compile the TypeScript and install the production node_modules
// once for all three), and the runner installs its optional agent CLIs through the script that
// fails the build when one does not install.
import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';

const IMAGES = ['control-plane', 'runner', 'lake'] as const;

/** The instructions of each stage (comments and blank lines dropped), by stage name. */
async function stages(image: string): Promise<Map<string, string[]>> {
  const text = await readFile(`images/${image}.Dockerfile`, 'utf8');
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const byName = new Map<string, string[]>();
  let current: string[] = [];
  for (const line of lines) {
    const from = /^FROM \S+(?: AS (\S+))?$/i.exec(line);
    if (from) {
      current = [];
      byName.set(from[1] ?? 'runtime', current);
    }
    current.push(line);
  }
  return byName;
}

describe('the images/*.Dockerfile stages', () => {
  it.each(['build', 'deps'])('the %s stage is the same in all three Dockerfiles', async (stage) => {
    const [first, ...others] = await Promise.all(
      IMAGES.map(async (image) => (await stages(image)).get(stage)),
    );
    expect(first).toBeDefined();
    for (const other of others) expect(other).toEqual(first);
  });

  it('the runner installs each optional agent CLI through install-agent-clis, after its build arguments', async () => {
    const runtime = (await stages('runner')).get('runtime') ?? [];
    const copy = runtime.indexOf('COPY images/install-agent-clis.sh /usr/local/bin/install-agent-clis');
    expect(copy).toBeGreaterThan(0);
    for (const [cli, install, version] of [
      ['claude-code', 'INSTALL_CLAUDE_CODE', 'CLAUDE_CODE_VERSION'],
      ['codex', 'INSTALL_CODEX', 'CODEX_VERSION'],
      ['gemini', 'INSTALL_GEMINI', 'GEMINI_CLI_VERSION'],
      ['opencode', 'INSTALL_OPENCODE', 'OPENCODE_VERSION'],
    ] as const) {
      const run = runtime.indexOf(`RUN install-agent-clis ${cli}`);
      expect(run).toBeGreaterThan(copy);
      expect(runtime.slice(run - 2, run)).toEqual([
        `ARG ${install}=false`,
        expect.stringMatching(new RegExp(`^ARG ${version}=\\d+\\.\\d+\\.\\d+$`)),
      ]);
    }
  });

  it('the build context sends the install script the runner copies', async () => {
    const ignore = (await readFile('.dockerignore', 'utf8')).split('\n');
    expect(ignore).toContain('!images/install-agent-clis.sh');
  });
});
