import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AGENTRY_RESOURCE_TYPES } from '../crds/index.js';
import { crdFileName, customResourceDefinitionYaml } from '../crds/generate.js';

/** Where the generated CRDs are committed, relative to the repository root. */
export const GENERATED_CRD_DIR = join('crds', 'generated');

export interface GeneratedFile {
  path: string;
  content: string;
}

export function generateCrdFiles(dir = GENERATED_CRD_DIR): GeneratedFile[] {
  return AGENTRY_RESOURCE_TYPES.map((type) => ({
    path: join(dir, crdFileName(type)),
    content: customResourceDefinitionYaml(type),
  }));
}

/** `agentry crds`: print all CRDs; `--write` refreshes crds/generated; `--check` fails on drift. */
export async function runCrdsCommand(options: { write: boolean; check: boolean }): Promise<number> {
  const files = generateCrdFiles();
  if (options.write) {
    await mkdir(GENERATED_CRD_DIR, { recursive: true });
    for (const file of files) await writeFile(file.path, file.content);
    console.error(`wrote ${files.length} CRDs to ${GENERATED_CRD_DIR}`);
    return 0;
  }
  if (options.check) {
    const stale: string[] = [];
    for (const file of files) {
      const committed = await readFile(file.path, 'utf8').catch(() => '');
      if (committed !== file.content) stale.push(file.path);
    }
    if (stale.length > 0) console.error(`out of date (run npm run crds): ${stale.join(', ')}`);
    return stale.length === 0 ? 0 : 1;
  }
  process.stdout.write(files.map((file) => file.content).join('---\n'));
  return 0;
}
