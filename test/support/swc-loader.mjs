// Node module hooks (module.register) that load .ts files through @swc/core, with the same settings as
// jest.config.js (cached on disk), and resolve NodeNext-style "./x.js" imports to "./x.ts" when no .js file exists.
import { transform, version } from '@swc/core';
import { createHash } from 'node:crypto';
import { access, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';

const isRelative = (specifier) => specifier.startsWith('./') || specifier.startsWith('../');

async function exists(url) {
  try {
    await access(fileURLToPath(url));
    return true;
  } catch {
    return false;
  }
}

export async function resolve(specifier, context, nextResolve) {
  if (isRelative(specifier) && specifier.endsWith('.js') && context.parentURL?.startsWith('file:')) {
    const asJs = new URL(specifier, context.parentURL);
    const asTs = new URL(specifier.replace(/\.js$/, '.ts'), context.parentURL);
    if (!(await exists(asJs)) && (await exists(asTs)))
      return { url: asTs.href, format: 'module', shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

const OPTIONS = {
  jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
  module: { type: 'es6' },
  sourceMaps: 'inline',
};
// Transformed modules, by path, source and swc version: every spawned process would otherwise
// transform the same few hundred files again (about 0.4 s of each start, measured on `agentry serve`).
const CACHE = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'agentry-swc');

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const filename = fileURLToPath(url);
  const source = await readFile(filename, 'utf8');
  const key = createHash('sha256').update(`${version}\0${filename}\0`).update(source).digest('hex');
  const cached = join(CACHE, `${key}.js`);
  try {
    return { format: 'module', source: await readFile(cached, 'utf8'), shortCircuit: true };
  } catch {
    // not cached yet
  }
  const { code } = await transform(source, { filename, ...OPTIONS });
  try {
    await mkdir(CACHE, { recursive: true });
    const partial = `${cached}.${process.pid}`;
    await writeFile(partial, code);
    await rename(partial, cached);
  } catch {
    // a cache that cannot be written only costs the next start a transform
  }
  return { format: 'module', source: code, shortCircuit: true };
}
