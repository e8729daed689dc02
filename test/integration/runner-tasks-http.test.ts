// The runner's task API (runner/server.ts) on loopback with the real shell executor.
// This file: the HTTP boundary: the workload token, validation, body limits, the prompt record.
import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { shellInvocation } from '../support/runner-client.js';
import { client, main, runShell, useMainRunner } from './runner-tasks-support.js';

useMainRunner();

describe('runner tasks: the HTTP boundary', () => {
  it('answers 401 to a dispatch without the workload token and runs nothing', async () => {
    const [taskId, promptId] = [randomUUID(), randomUUID()];
    const res = await fetch(`${client.url}/v1/tasks/${taskId}/prompts/${promptId}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'true\n', executor: shellInvocation() }),
    });
    expect(res.status).toBe(401);
    expect(await client.prompt(taskId, promptId)).toBeUndefined();
  });

  it('answers 400 validation_error for a task id that is no object name (it becomes a directory)', async () => {
    const res = await client.dispatch('Not_A..Name', randomUUID(), {
      text: 'true\n',
      executor: shellInvocation(),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: { code: 'validation_error', details: [{ path: 'taskId' }] },
    });
  });

  it('answers 400 validation_error for a body with an unknown field', async () => {
    const res = await client.dispatch(randomUUID(), randomUUID(), {
      text: 'true\n',
      executor: shellInvocation(),
      surprise: true,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('validation_error');
  });

  it('answers 413 payload_too_large for a body over the limit', async () => {
    const res = await client.dispatch(randomUUID(), randomUUID(), {
      text: 'x'.repeat(2 * 1024 * 1024),
      executor: shellInvocation(),
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('payload_too_large');
  });

  it('keeps the prompt record 0600 and drops the executor’s environment from it once the prompt ended', async () => {
    const [taskId, promptId] = [randomUUID(), randomUUID()];
    const key = `sk-${randomUUID()}`;
    await runShell(taskId, promptId, 'test -n "$API_KEY" && echo has-key\n', {
      executor: shellInvocation({ API_KEY: key }),
    });
    expect((await client.waitForTerminal(taskId, promptId)).finalResult).toBe('has-key');
    const record = join(main.stateDir, 'tasks', taskId, 'prompts', `${promptId}.json`);
    expect((await stat(record)).mode & 0o777).toBe(0o600);
    expect(await readFile(record, 'utf8')).not.toContain(key);
  });
});
