// `npm start` and `npm run crds` build first: say so, and how long it took, instead of a silent
// pause of several seconds. Usage: node scripts/build-with-progress.mjs
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import process from 'node:process';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const started = process.hrtime.bigint();
process.stderr.write('agentry: building (tsc -p tsconfig.build.json)…\n');
const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
if (result.status !== 0) {
  process.stderr.write(`agentry: build failed after ${seconds.toFixed(1)} s (errors above)\n`);
  process.exit(result.status ?? 1);
}
process.stderr.write(`agentry: built in ${seconds.toFixed(1)} s\n`);
