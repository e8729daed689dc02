import { describe, expect, it } from '@jest/globals';
import type {
  ModelBudget,
  ModelUsageTotals,
  Organization,
  PromptStatusEntry,
  Task,
} from '../../crds/index.js';
import { usagePeriodOf } from '../../crds/index.js';
import { promptBudgetBreach, taskBudgetBreach } from '../../operator/task/budget.js';
import { taskFixture } from '../support/task-fixture.js';

const P1 = '00000000-0000-4000-8000-000000000001';
const NOW = new Date('2026-11-22T10:00:00.000Z');
const usage = (costUsd: number, tokens = 0): ModelUsageTotals => ({
  requests: 1,
  inputTokens: tokens,
  outputTokens: 0,
  costUsd,
});

function task(budget?: ModelBudget, spent?: ModelUsageTotals): Task {
  const base = taskFixture({ entries: [{ id: P1, status: 'running' }] });
  return {
    ...base,
    spec: { ...base.spec, ...(budget === undefined ? {} : { budget }) },
    status: { ...base.status, ...(spent === undefined ? {} : { usage: spent }) },
  };
}

function organization(budget: ModelBudget, spent: ModelUsageTotals, period: string): Organization {
  return {
    apiVersion: 'agentry.dev/v1alpha1',
    kind: 'Organization',
    metadata: { name: 'acme' },
    spec: {
      displayName: 'Acme',
      plan: 'free',
      limits: { webhooks: 3, concurrentTasks: 10, agentComputers: 10 },
      executors: { default: 'claude', disabled: [] },
      allowPrivateWebhookTargets: false,
      budget,
    },
    status: { usage: { ...spent, period } },
  };
}

describe('taskBudgetBreach', () => {
  it("is reached once the task's counted cost reaches its maxCostUsd, naming the limit", () => {
    expect(taskBudgetBreach(task({ maxCostUsd: 5 }, usage(5)), undefined, NOW)).toEqual({
      scope: 'task',
      message: "the task's budget of $5.00 was reached",
    });
  });

  it('is not reached below the limit, nor without a budget', () => {
    expect(taskBudgetBreach(task({ maxCostUsd: 5 }, usage(4.99)), undefined, NOW)).toBeUndefined();
    expect(taskBudgetBreach(task(undefined, usage(1000)), undefined, NOW)).toBeUndefined();
  });

  it('counts input plus output tokens against maxTokens', () => {
    expect(taskBudgetBreach(task({ maxTokens: 1000 }, usage(0, 1000)), undefined, NOW)?.message).toBe(
      "the task's budget of 1000 tokens was reached",
    );
  });

  it("applies the organization's monthly budget to this month's usage", () => {
    const org = organization({ maxCostUsd: 100 }, usage(100), usagePeriodOf(NOW));
    expect(taskBudgetBreach(task(), org, NOW)).toEqual({
      scope: 'organization',
      message: "the organization's monthly budget of $100.00 was reached",
    });
  });

  it("ignores the organization's usage of an earlier month (a new month starts from zero)", () => {
    const org = organization({ maxCostUsd: 100 }, usage(500), '2026-10');
    expect(taskBudgetBreach(task(), org, NOW)).toBeUndefined();
  });
});

describe('promptBudgetBreach', () => {
  const flagged = (scope: 'task' | 'organization'): PromptStatusEntry => ({
    id: P1,
    status: 'running',
    budgetExceeded: scope,
  });

  it('stops a prompt the model gateway flagged even while the recorded usage is below the budget', () => {
    const t = task({ maxCostUsd: 5 }, usage(1));
    expect(promptBudgetBreach(flagged('task'), undefined, t, undefined)).toEqual({
      scope: 'task',
      message: "the task's budget of $5.00 was reached",
    });
  });

  it("names the organization's budget when the flag says so", () => {
    const org = organization({ maxTokens: 10 }, usage(0), usagePeriodOf(NOW));
    expect(promptBudgetBreach(flagged('organization'), undefined, task(), org)?.message).toBe(
      "the organization's monthly budget of 10 tokens was reached",
    );
  });

  it("leaves an unflagged prompt to the task's level", () => {
    expect(promptBudgetBreach({ id: P1, status: 'running' }, undefined, task(), undefined)).toBeUndefined();
  });
});
