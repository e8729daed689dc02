// `npm start` and `npm run crds` build first: say so, and how long it took, instead of a silent
// pause of several seconds. Usage: node scripts/build-with-progress.mjs
// Two steps: the server (tsc) and the web pages (vite, into dist/web, served under /ui/).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import process from 'node:process';
import { build } from 'vite';

const started = process.hrtime.bigint();
const elapsed = () => (Number(process.hrtime.bigint() - started) / 1e9).toFixed(1);
const fail = (status) => {
  process.stderr.write(`agentry: build failed after ${elapsed()} s (errors above)\n`);
  process.exit(status);
};

process.stderr.write('agentry: building (tsc -p tsconfig.build.json)…\n');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
if (result.status !== 0) fail(result.status ?? 1);

process.stderr.write('agentry: building the web pages (vite build)…\n');
await build({ configFile: 'web/vite.config.ts', logLevel: 'warn' }).catch(() => fail(1));
process.stderr.write(`agentry: built in ${elapsed()} s\n`);
