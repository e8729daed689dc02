// The Argo CD health checks have one source, deploy/argocd/health/*.lua; the Helm chart ships
// copies rendered from it (`npm run argocd-health`), which must not drift from it.
import { describe, expect, it } from '@jest/globals';
import { readdir, readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { z } from 'zod';
import { AGENTRY_RESOURCE_TYPES } from '../../crds/index.js';
import {
  CHART_COPIES,
  HEALTH_DIR,
  healthFiles,
  healthScript,
  renderChartCopies,
} from '../../scripts/argocd-health.js';

const FIX = 'npm run argocd-health';

describe('Argo CD health checks', () => {
  it('has one Lua file for every Agentry kind, one of shared helpers, and no other', async () => {
    const files = (await readdir(HEALTH_DIR)).sort();
    expect(files).toEqual(healthFiles().sort());
    for (const { kind } of AGENTRY_RESOURCE_TYPES)
      await expect(healthScript(kind)).resolves.toMatch(/return hs/);
  });

  it.each(Object.values(CHART_COPIES))('%s is what the Lua files render', async (path) => {
    const rendered = (await renderChartCopies())[path];
    const copy = await readFile(path, 'utf8').catch(() => 'missing');
    // On failure the message names the command that brings the copy up to date.
    expect(copy === rendered ? 'identical' : `differs; run: ${FIX}`).toBe('identical');
  });

  it("the argocd-cm patch holds each kind's Lua under resource.customizations.health.<group>_<Kind>", async () => {
    const patch = z
      .object({ data: z.record(z.string(), z.string()) })
      .parse(parse(await readFile(CHART_COPIES.argocdCmPatch, 'utf8')));
    const expected = await Promise.all(
      AGENTRY_RESOURCE_TYPES.map(async ({ kind }) => [
        `resource.customizations.health.agentry.dev_${kind}`,
        await healthScript(kind),
      ]),
    );
    expect(patch.data).toEqual(Object.fromEntries(expected));
  });
});
