import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { generateConditionsDoc, generateCrdFiles } from '../../cli/crds.js';
import { customResourceDefinition, toStructuralSchema } from '../../crds/generate.js';
import { AGENTRY_RESOURCE_TYPES, CATEGORY } from '../../crds/index.js';

describe('CRD generation', () => {
  it.each(generateCrdFiles().map((file) => [file.path, file.content]))(
    'the committed %s equals what `npm run crds` generates',
    async (path, content) => {
      await expect(readFile(path, 'utf8')).resolves.toBe(content);
    },
  );

  it('the committed docs/conditions.md equals what `npm run crds` generates', async () => {
    const doc = generateConditionsDoc();
    await expect(readFile(doc.path, 'utf8')).resolves.toBe(doc.content);
  });

  it.each(AGENTRY_RESOURCE_TYPES.map((type) => type.kind))(
    '%s has a status subresource, short names and the agentry category',
    (kind) => {
      const type = AGENTRY_RESOURCE_TYPES.find((candidate) => candidate.kind === kind);
      if (type === undefined) throw new Error(`no type ${kind}`);
      const crd = customResourceDefinition(type);
      const spec = z
        .object({
          names: z.object({ shortNames: z.array(z.string()).min(1), categories: z.array(z.string()) }),
          versions: z.array(z.object({ subresources: z.object({ status: z.object({}) }) })).length(1),
        })
        .parse(crd.spec);
      expect(spec.names.categories).toEqual([CATEGORY]);
    },
  );

  it('rejects a union, which a structural schema cannot express', () => {
    const union = z.toJSONSchema(z.object({ a: z.union([z.string(), z.number()]) }), {
      target: 'openapi-3.0',
    });
    expect(() => toStructuralSchema(union)).toThrow(/anyOf/);
  });

  it('drops additionalProperties: false beside properties (the API server prunes instead)', () => {
    const strict = z.toJSONSchema(z.strictObject({ a: z.string() }), { target: 'openapi-3.0' });
    expect(strict.additionalProperties).toBe(false);
    expect(toStructuralSchema(strict)).not.toHaveProperty('additionalProperties');
  });

  it('keeps a map of strings as additionalProperties', () => {
    const map = z.toJSONSchema(z.record(z.string(), z.string()), { target: 'openapi-3.0' });
    expect(toStructuralSchema(map)).toEqual({ type: 'object', additionalProperties: { type: 'string' } });
  });
});
