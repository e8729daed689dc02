// Budgets on the embedded default (docs/adr/0009): the model gateway's part (usage, the flag on a
// prompt) is played by the test, which writes the Task and Organization status as the gateway
// does; the operator and real runner processes do the rest.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TaskRecordSchema } from '../../api/task/present.js';
import type { TaskRecord } from '../../api/task/present.js';
import { EventType, OrganizationType, TaskType, usagePeriodOf } from '../../crds/index.js';
import type { ModelUsage, PromptStatusEntry, Task } from '../../crds/index.js';
import { workspacePaths } from '../../operator/runtimes/process/workspace.js';
import { updateStatus } from '../../platform/store/status-writer.js';
import { call } from '../support/api-server.js';
import type { TestApi } from '../support/api-server.js';
import { startEmbeddedStack } from '../support/embedded-stack.js';
import type { EmbeddedStack } from '../support/embedded-stack.js';
import { hostPidOf } from '../support/host-pids.js';
import { processGone } from '../support/runner-client.js';
import { until } from '../support/until.js';

const ORG = 'budgets';
const NAMESPACE = `agentry-org-${ORG}`;
let stack: EmbeddedStack;
let api: TestApi;
let key: string;

beforeAll(async () => {
  stack = await startEmbeddedStack({ prefix: 'agentry-budgets-' });
  api = stack.api;
  key = await api.key({ org: ORG });
}, 60_000);

afterAll(async () => {
  await stack.stop();
}, 90_000);

/** A prompt that records its pid and sleeps until it is killed. */
const SLEEPER = 'echo $$ > shell.pid\nsleep 600 &\necho $! > sleep.pid\nwait';

async function createTask(body: Record<string, unknown>): Promise<{ id: string; workspaceId: string }> {
  const res = await call(api, '/v1/tasks', { key, method: 'POST', body: { executor: 'shell', ...body } });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; workspaceId: string };
}

async function getTask(id: string): Promise<TaskRecord> {
  const res = await call(api, `/v1/tasks/${id}`, { key });
  expect(res.status).toBe(200);
  return TaskRecordSchema.parse(await res.json());
}

const untilPromptEnds = (id: string, index = 0) =>
  until(
    `prompt ${index} of task ${id} to end`,
    async () => {
      const prompt = (await getTask(id)).prompts[index];
      return prompt === undefined || prompt.status === 'pending' || prompt.status === 'running'
        ? undefined
        : prompt;
    },
    60_000,
  );

/** The host pids of the sleeping prompt's shell and sleep, once both run. */
function sleeperPids(workspaceId: string): Promise<number[]> {
  const code = workspacePaths(stack.dir, NAMESPACE, workspaceId).code;
  return until('the prompt to start its processes', async () => {
    const shell = await readFile(join(code, 'shell.pid'), 'utf8').catch(() => '');
    const child = await readFile(join(code, 'sleep.pid'), 'utf8').catch(() => '');
    if (shell.trim() === '' || child.trim() === '') return undefined;
    const host = await Promise.all([hostPidOf(Number(shell), code), hostPidOf(Number(child), code)]);
    return host.every((pid) => pid !== undefined) ? host : undefined;
  });
}

const untilGone = (pids: readonly number[]) =>
  until(
    'every process of the prompt to be gone',
    () => Promise.resolve(pids.every(processGone) || undefined),
    20_000,
  );

/** Writes the Task status as the model gateway does: read-merge-write, keeping what it does not own. */
function writeAsGateway(
  id: string,
  change: (status: NonNullable<Task['status']>) => NonNullable<Task['status']>,
): Promise<Task | undefined> {
  return updateStatus(api.store, TaskType, { namespace: NAMESPACE, name: id }, (task) =>
    change(task.status ?? {}),
  );
}

const spent = (costUsd: number): ModelUsage => ({
  requests: 4,
  inputTokens: 4000,
  outputTokens: 800,
  costUsd,
});

const budgetEvents = async (id: string): Promise<string[]> =>
  (await api.store.list(EventType, { namespace: NAMESPACE })).items
    .filter((event) => event.involvedObject.name === id && event.reason === 'BudgetExceeded')
    .map((event) => event.message ?? '');

describe("a task's budget", () => {
  it('stops a running prompt once the task usage reaches it: failed, budget_exceeded, its processes killed, an Event', async () => {
    const task = await createTask({ prompt: SLEEPER, budget: { maxCostUsd: 5 } });
    const pids = await sleeperPids(task.workspaceId);
    await writeAsGateway(task.id, (status) => ({ ...status, usage: spent(5.01) }));
    const prompt = await untilPromptEnds(task.id);
    expect(prompt).toMatchObject({
      status: 'failed',
      failureReason: 'budget_exceeded',
      error: "the task's budget of $5.00 was reached",
    });
    await untilGone(pids);
    const record = await getTask(task.id);
    expect(record.status).toBe('failed');
    // The reconciler's own status writes kept the gateway's figures.
    expect(record.usage).toMatchObject(spent(5.01));
    expect(await until('a BudgetExceeded Event', async () => (await budgetEvents(task.id))[0])).toContain(
      "the task's budget of $5.00 was reached",
    );
  });

  it('stops a running prompt the model gateway flagged, keeping its usage', async () => {
    const task = await createTask({ prompt: SLEEPER, budget: { maxTokens: 1_000_000 } });
    const pids = await sleeperPids(task.workspaceId);
    const usage = spent(0.4);
    await writeAsGateway(task.id, (status) => ({
      ...status,
      prompts: (status.prompts ?? []).map((entry): PromptStatusEntry => ({
        ...entry,
        usage,
        budgetExceeded: 'task',
      })),
    }));
    const prompt = await untilPromptEnds(task.id);
    expect(prompt).toMatchObject({ status: 'failed', failureReason: 'budget_exceeded', usage });
    expect(prompt.error).toBe("the task's budget of 1000000 tokens was reached");
    await untilGone(pids);
  });

  it('fails a later prompt of a task over its budget without dispatching it', async () => {
    const task = await createTask({ prompt: 'echo first', budget: { maxCostUsd: 1 } });
    expect((await untilPromptEnds(task.id)).status).toBe('succeeded');
    await writeAsGateway(task.id, (status) => ({ ...status, usage: spent(1) }));
    const res = await call(api, `/v1/tasks/${task.id}/prompts`, {
      key,
      method: 'POST',
      body: { prompt: 'echo should-not-run > ran.txt' },
    });
    expect(res.status).toBe(201);
    const prompt = await untilPromptEnds(task.id, 1);
    expect(prompt).toMatchObject({ status: 'failed', failureReason: 'budget_exceeded', lastSeq: null });
    const stored = await api.store.get(TaskType, NAMESPACE, task.id);
    expect(stored?.status?.prompts?.[1]?.dispatchedAt).toBeUndefined();
    const code = workspacePaths(stack.dir, NAMESPACE, task.workspaceId).code;
    await expect(readFile(join(code, 'ran.txt'), 'utf8')).rejects.toThrow();
  });
});

describe("the organization's monthly budget", () => {
  it("fails a new task's prompt at dispatch once this month's usage reached it, and an earlier month's does not count", async () => {
    const setOrgUsage = (period: string) =>
      updateStatus(api.store, OrganizationType, { namespace: undefined, name: ORG }, (org) => ({
        ...org.status,
        usage: { ...spent(50), period },
      }));
    const org = await api.store.get(OrganizationType, undefined, ORG);
    if (org === undefined) throw new Error('the organization is missing');
    await api.store.replace(OrganizationType, { ...org, spec: { ...org.spec, budget: { maxCostUsd: 50 } } });

    await setOrgUsage('2000-01');
    const before = await createTask({ prompt: 'echo old month' });
    expect((await untilPromptEnds(before.id)).status).toBe('succeeded');

    await setOrgUsage(usagePeriodOf(new Date()));
    // The operator reads the organization from its cache: wait until a task sees the new usage.
    const task = await createTask({ prompt: 'echo over budget' });
    const prompt = await untilPromptEnds(task.id);
    expect(prompt).toMatchObject({
      status: 'failed',
      failureReason: 'budget_exceeded',
      error: "the organization's monthly budget of $50.00 was reached",
    });
  });
});
