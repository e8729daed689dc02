// Node module hooks (module.register) that load .ts files through @swc/core, with the same settings as
// jest.config.js, and resolve NodeNext-style "./x.js" imports to "./x.ts" when no .js file exists.
import { transform } from '@swc/core';
import { access, readFile } from 'node:fs/promises';
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

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const filename = fileURLToPath(url);
  const { code } = await transform(await readFile(filename, 'utf8'), {
    filename,
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'es6' },
    sourceMaps: 'inline',
  });
  return { format: 'module', source: code, shortCircuit: true };
}
