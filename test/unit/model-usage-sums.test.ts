import { describe, expect, it } from '@jest/globals';
import { OrganizationSpecSchema, TaskSpecSchema, reachedBudget } from '../../crds/index.js';
import type { ModelUsage, Organization, Task } from '../../crds/index.js';
import { addToTotals, sumUsage } from '../../api/model-gateway/usage-sums.js';

const call = (tokens: number, costUsd: number): ModelUsage => ({
  requests: 1,
  inputTokens: tokens,
  outputTokens: 0,
  costUsd,
});
const at = new Date('2026-11-25T12:00:00Z');

const task = (usage: ModelUsage | undefined, budget?: { maxTokens: number }): Task => ({
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'Task',
  metadata: { name: 't', namespace: 'n' },
  spec: TaskSpecSchema.parse({
    workspace: 'w',
    executor: 'claude',
    title: 't',
    owner: 'o',
    prompts: [{ id: '00000000-0000-4000-8000-000000000000', text: 'x', submittedAt: at.toISOString() }],
    ...(budget === undefined ? {} : { budget }),
  }),
  ...(usage === undefined ? {} : { status: { usage } }),
});

const organization = (period: string, costUsd: number): Organization => ({
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'Organization',
  metadata: { name: 'acme' },
  spec: OrganizationSpecSchema.parse({ displayName: 'acme', budget: { maxCostUsd: 10 } }),
  status: { usage: { ...call(1, costUsd), period } },
});

describe('usage sums', () => {
  it('adds cents without floating-point drift', () => {
    let total: ModelUsage = call(0, 0);
    for (let i = 0; i < 10; i += 1) total = sumUsage(total, call(1, 0.1));
    expect(total.costUsd).toBe(1);
  });

  it('keeps optional figures absent when neither side has them', () => {
    expect(sumUsage(call(1, 0), call(2, 0))).toEqual({
      requests: 2,
      inputTokens: 3,
      outputTokens: 0,
      costUsd: 0,
    });
  });

  it('breaks totals down by model, adding to an existing line', () => {
    const line = { model: 'm', provider: 'openai' as const };
    const once = addToTotals(undefined, call(5, 1), line, at);
    const twice = addToTotals(once, call(5, 1), line, at);
    expect(twice.byModel).toEqual([{ ...line, requests: 2, inputTokens: 10, outputTokens: 0, costUsd: 2 }]);
    expect(twice.updatedAt).toBe(at.toISOString());
  });

  it('stops adding model lines past 50 but still counts the calls in the totals', () => {
    let totals = addToTotals(undefined, call(1, 0), { model: 'm0', provider: 'openai' }, at);
    for (let i = 1; i <= 50; i += 1)
      totals = addToTotals(totals, call(1, 0), { model: `m${i}`, provider: 'openai' }, at);
    expect(totals.byModel).toHaveLength(50);
    expect(totals.requests).toBe(51);
  });
});

describe('exceeded budget', () => {
  it("names the task's budget first", () => {
    expect(reachedBudget(task(call(10, 0), { maxTokens: 10 }), organization('2026-11', 11), at)).toBe('task');
  });

  it("counts the organization's usage of this month only", () => {
    expect(reachedBudget(task(undefined), organization('2026-11', 10), at)).toBe('organization');
    expect(reachedBudget(task(undefined), organization('2026-10', 10), at)).toBeUndefined();
  });
});
