import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'vite';

/** The environment variable through which the browser tests find the pages global setup built. */
export const WEB_ROOT_ENV = 'AGENTRY_TEST_WEB_ROOT';

/** The pages as `npm run build` makes them (web/vite.config.ts), built into a fresh temporary directory. */
export async function buildPages(): Promise<string> {
  const outDir = await mkdtemp(join(tmpdir(), 'agentry-browser-web-'));
  await build({
    configFile: resolve('web/vite.config.ts'),
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true },
  });
  return outDir;
}

/** The pages global setup built; a test file run without it is a harness bug. */
export function builtPagesRoot(): string {
  const root = process.env[WEB_ROOT_ENV];
  if (root === undefined || root === '')
    throw new Error(`${WEB_ROOT_ENV} is unset: run the jest project "browser"`);
  return root;
}

export async function removePages(root: string): Promise<void> {
  await rm(root, { recursive: true, force: true });
}
