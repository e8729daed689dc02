import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  AGENTRY_CONDITION_CATALOGS,
  AGENTRY_EVENT_CATALOGS,
  AGENTRY_RESOURCE_TYPES,
  eventsMarkdown,
} from '../crds/index.js';
import { conditionsMarkdown } from '../crds/condition-catalog.js';
import { crdFileName, customResourceDefinitionYaml } from '../crds/generate.js';
import type { CliCommand } from './command.js';

/** Where the generated CRDs are committed, relative to the repository root. */
export const GENERATED_CRD_DIR = join('crds', 'generated');
/** Helm installs a chart's crds/ folder before its templates (and never deletes it): the same files. */
export const CHART_CRD_DIR = join('charts', 'agentry', 'crds');
const CRD_DIRS = [GENERATED_CRD_DIR, CHART_CRD_DIR];

export interface GeneratedFile {
  path: string;
  content: string;
}

/** The page listing every kind's conditions and reasons, generated from the same catalogs as the CRDs. */
export const CONDITIONS_DOC = join('docs', 'conditions.md');

export const generateConditionsDoc = (): GeneratedFile => ({
  path: CONDITIONS_DOC,
  content: `${conditionsMarkdown(AGENTRY_CONDITION_CATALOGS)}\n${eventsMarkdown(AGENTRY_EVENT_CATALOGS)}`,
});

export function generateCrdFiles(dir = GENERATED_CRD_DIR): GeneratedFile[] {
  return AGENTRY_RESOURCE_TYPES.map((type) => ({
    path: join(dir, crdFileName(type)),
    content: customResourceDefinitionYaml(type),
  }));
}

/**
 * `agentry crds`: print all CRDs; `--write` refreshes crds/generated, the chart's copies and
 * docs/conditions.md; `--check` fails on drift.
 */
export async function runCrdsCommand(options: { write: boolean; check: boolean }): Promise<number> {
  const crds = CRD_DIRS.flatMap((dir) => generateCrdFiles(dir));
  const files = [...crds, generateConditionsDoc()];
  if (options.write) {
    for (const dir of CRD_DIRS) await mkdir(dir, { recursive: true });
    for (const file of files) await writeFile(file.path, file.content);
    console.error(
      `wrote ${crds.length / CRD_DIRS.length} CRDs to ${CRD_DIRS.join(' and ')}, and ${CONDITIONS_DOC}`,
    );
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
  process.stdout.write(crds.map((file) => file.content).join('---\n'));
  return 0;
}

const USAGE = `usage: agentry crds [--write | --check]

Prints the CustomResourceDefinitions of Agentry's kinds, generated from their schemas, as YAML.

options:
  --write   write them to crds/generated/ and charts/agentry/crds/, and docs/conditions.md
            (run in the repository root)
  --check   exit 1 when the committed files differ from the schemas

examples:
  agentry crds | kubectl apply -f -
  agentry crds --check
`;

/** `agentry crds` as a command. */
export const crdsCommand: CliCommand = {
  usage: () => USAGE,
  run: async (args) => {
    const { values } = parseArgs({
      args,
      options: { write: { type: 'boolean' }, check: { type: 'boolean' } },
    });
    return runCrdsCommand({ write: values.write === true, check: values.check === true });
  },
};
