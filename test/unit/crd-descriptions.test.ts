// `kubectl explain` prints a CRD field's description and nothing else it knows about the field, so
// every field of every Agentry CRD must carry one (zod's `.describe()` in crds/).
import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { customResourceDefinition, toStructuralSchema } from '../../crds/generate.js';
import { AGENTRY_RESOURCE_TYPES } from '../../crds/index.js';

type JsonSchema = Record<string, unknown>;

const isSchema = (value: unknown): value is JsonSchema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const hasDescription = (node: JsonSchema): boolean =>
  typeof node.description === 'string' && node.description.trim() !== '';

/**
 * The paths of the properties below `node` (and `node` itself) without a description. An array's
 * items and a map's values are described by the field that holds them; their own fields are walked.
 */
function undescribedPaths(node: JsonSchema, path: string, describedByParent = false): string[] {
  const own = describedByParent || hasDescription(node) ? [] : [path];
  const properties = isSchema(node.properties) ? Object.entries(node.properties) : [];
  const children = properties.flatMap(([name, child]) =>
    isSchema(child) ? undescribedPaths(child, `${path}.${name}`) : [`${path}.${name}`],
  );
  const nested = (['items', 'additionalProperties'] as const).flatMap((key) => {
    const child = node[key];
    return isSchema(child) ? undescribedPaths(child, `${path}[${key}]`, true) : [];
  });
  return [...own, ...children, ...nested];
}

/** The openAPIV3Schema of the one version of a generated CRD. */
function openApiV3Schema(crd: JsonSchema): JsonSchema {
  const spec = z
    .object({
      versions: z.array(z.object({ schema: z.object({ openAPIV3Schema: z.looseObject({}) }) })).length(1),
    })
    .parse(crd.spec);
  const [version] = spec.versions;
  if (version === undefined) throw new Error('the CRD has no version');
  return version.schema.openAPIV3Schema;
}

describe('CRD field descriptions', () => {
  it.each(AGENTRY_RESOURCE_TYPES.map((type) => [type.kind, type] as const))(
    'every field of the %s CRD has a description',
    (kind, type) => {
      const schema = openApiV3Schema(customResourceDefinition(type));
      // The API server refuses a description on metadata; `kubectl explain` shows ObjectMeta's own.
      const undescribed = undescribedPaths(schema, kind.toLowerCase());
      expect(undescribed.filter((path) => path !== `${kind.toLowerCase()}.metadata`)).toEqual([]);
    },
  );

  it('names the path of a field without a description', () => {
    const schema = toStructuralSchema(
      z.toJSONSchema(
        z
          .object({
            described: z.string().describe('has one'),
            list: z.array(z.object({ bare: z.string() })).describe('a list'),
          })
          .describe('root'),
        { target: 'openapi-3.0', io: 'input' },
      ),
    );
    expect(undescribedPaths(schema, 'spec')).toEqual(['spec.list[items].bare']);
  });
});
