import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { isTrueForGeneration } from '../../crds/conditions.js';
import type { WithConditions } from '../../crds/conditions.js';
import { conditionsMarkdown, defineConditions } from '../../crds/condition-catalog.js';
import { customResourceDefinition } from '../../crds/generate.js';
import { AGENTRY_CONDITION_CATALOGS, AGENTRY_RESOURCE_TYPES, TaskReasons } from '../../crds/index.js';
import type { Condition } from '../../crds/index.js';

const ready = (status: Condition['status'], observedGeneration?: number): Condition => ({
  type: 'Ready',
  status,
  lastTransitionTime: '2026-01-01T00:00:00Z',
  reason: 'Test',
  message: '',
  ...(observedGeneration === undefined ? {} : { observedGeneration }),
});

const at = (generation: number | undefined, ...conditions: Condition[]): WithConditions => ({
  metadata: generation === undefined ? {} : { generation },
  status: { conditions },
});

describe('true for this generation', () => {
  it('counts a True condition observed for the current generation', () => {
    expect(isTrueForGeneration(at(3, ready('True', 3)), 'Ready')).toBe(true);
  });

  it('does not count a True condition observed for an older generation', () => {
    expect(isTrueForGeneration(at(4, ready('True', 3)), 'Ready')).toBe(false);
  });

  it('does not count a True condition without observedGeneration on a resource that has a generation', () => {
    expect(isTrueForGeneration(at(1, ready('True')), 'Ready')).toBe(false);
  });

  it('does not count a False condition of the current generation', () => {
    expect(isTrueForGeneration(at(3, ready('False', 3)), 'Ready')).toBe(false);
  });

  it('does not count a condition that is absent', () => {
    expect(isTrueForGeneration(at(3), 'Ready')).toBe(false);
  });
});

describe('condition catalogs', () => {
  it('names each type and reason by itself', () => {
    const catalog = defineConditions('Thing', {
      Ready: { doc: 'It works.', reasons: { Up: 'it is up', Down: 'it is down' } },
      Synced: { doc: 'It is synced.', reasons: { Down: 'the source is down' } },
    });
    expect(catalog.types).toEqual({ Ready: 'Ready', Synced: 'Synced' });
    expect(catalog.reasons).toEqual({ Up: 'Up', Down: 'Down' });
  });

  it('puts every condition type and reason of a kind into its CRD status.conditions description', () => {
    const described = AGENTRY_CONDITION_CATALOGS.map((catalog) => {
      const type = AGENTRY_RESOURCE_TYPES.find((candidate) => candidate.kind === catalog.kind);
      if (type === undefined) throw new Error(`no resource type ${catalog.kind}`);
      const description = z
        .object({
          spec: z.object({
            versions: z.array(
              z.object({
                schema: z.object({
                  openAPIV3Schema: z.object({
                    properties: z.object({
                      status: z.object({
                        properties: z.object({ conditions: z.object({ description: z.string() }) }),
                      }),
                    }),
                  }),
                }),
              }),
            ),
          }),
        })
        .parse(customResourceDefinition(type)).spec.versions[0]?.schema.openAPIV3Schema.properties.status
        .properties.conditions.description;
      const names = [...Object.keys(catalog.types), ...Object.keys(catalog.reasons)];
      return names.filter((name) => description?.includes(name) !== true);
    });
    expect(described).toEqual(AGENTRY_CONDITION_CATALOGS.map(() => []));
  });

  it('lists in docs/conditions.md each reason under the type that carries it', () => {
    const page = conditionsMarkdown(AGENTRY_CONDITION_CATALOGS);
    const dispatched = page.slice(page.indexOf('### Dispatched'), page.indexOf('### Archived'));
    expect(dispatched).toContain(`\`${TaskReasons.Waiting}\``);
  });

  // Regression: DispatchFailed was documented for the Dispatched condition but never set.
  it('documents no Task reason DispatchFailed, which nothing sets', () => {
    expect(Object.keys(TaskReasons)).not.toContain('DispatchFailed');
  });
});
