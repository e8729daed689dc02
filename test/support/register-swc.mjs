// Lets plain `node` run this repository's TypeScript, for tests that spawn child processes (jest's
// transform does not reach them):  node --import ./test/support/register-swc.mjs path/to/script.ts
import { register } from 'node:module';

register('./swc-loader.mjs', import.meta.url);
