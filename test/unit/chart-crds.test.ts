// The Helm chart carries its own copy of the CRDs (Helm installs a chart's crds/ before anything
// else and never deletes them); the copies must be exactly what `npm run crds` generates.
import { describe, expect, it } from '@jest/globals';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

const GENERATED = 'crds/generated';
const CHART_CRDS = 'charts/agentry/crds';
const FIX = `cp ${GENERATED}/*.yaml ${CHART_CRDS}/`;

const yamlFiles = async (dir: string): Promise<string[]> =>
  (await readdir(dir)).filter((name) => name.endsWith('.yaml')).sort();

describe('chart CRDs', () => {
  it('the chart holds one file for every generated CRD and no other', async () => {
    const chart = await yamlFiles(CHART_CRDS);
    expect({ files: chart, fix: FIX }).toEqual({ files: await yamlFiles(GENERATED), fix: FIX });
  });

  it.each(['agentcomputers', 'contextlakes', 'organizations', 'tasks', 'webhooks'])(
    'charts/agentry/crds/%s.agentry.dev.yaml is identical to crds/generated',
    async (plural) => {
      const file = `${plural}.agentry.dev.yaml`;
      const generated = await readFile(join(GENERATED, file), 'utf8');
      const copy = await readFile(join(CHART_CRDS, file), 'utf8').catch(() => `missing; run: ${FIX}`);
      // On failure the message names the command that brings the copy up to date.
      expect(copy === generated ? 'identical' : `differs; run: ${FIX}`).toBe('identical');
    },
  );
});
