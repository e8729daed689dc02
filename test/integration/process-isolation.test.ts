// Confinement of the embedded default's workspaces (bubblewrap, docs/adr/0005): the real API,
// operator and confined runner processes running prompts with the `shell` executor, two
// organizations on one data directory. Run this file with AGENTRY_PROCESS_ISOLATION=none to watch
// the confinement tests fail: each reads or writes what it must not, and unconfined it can.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { RunnerRecordSchema, workspacePaths } from '../../operator/runtimes/process/workspace.js';
import { call } from '../support/api-server.js';
import type { TestApi } from '../support/api-server.js';
import { startEmbeddedStack } from '../support/embedded-stack.js';
import type { EmbeddedStack } from '../support/embedded-stack.js';
import { hostPidOf } from '../support/host-pids.js';
import { processGone } from '../support/runner-client.js';
import { readTaskStream } from '../support/sse.js';
import { until } from '../support/until.js';

const ISOLATION = process.env.AGENTRY_PROCESS_ISOLATION === 'none' ? 'none' : 'bubblewrap';
const ALPHA = 'agentry-org-alpha';
const BRAVO = 'agentry-org-bravo';

let stack: EmbeddedStack;
let api: TestApi;
let alphaKey: string;
/** Bravo's workspace directory, a file bravo's prompt wrote there, its artifact on disk. */
let bravoCode: string;
let bravoArtifactFile: string;

interface Outcome {
  status: string | undefined;
  output: string;
  workspaceId: string;
}

async function createTask(key: string, prompt: string, workspaceId?: string) {
  const body = { executor: 'shell', prompt, ...(workspaceId === undefined ? {} : { workspaceId }) };
  const res = await call(api, '/v1/tasks', { key, method: 'POST', body });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; workspaceId: string };
}

/** Runs a shell prompt as `key`'s organization to its end: the task's status and its output lines. */
async function runPrompt(key: string, prompt: string, workspaceId?: string): Promise<Outcome> {
  const task = await createTask(key, prompt, workspaceId);
  const stream = await readTaskStream(`${api.url}/v1/tasks/${task.id}/events`, { key, timeoutMs: 90_000 });
  const output = stream.events
    .filter((event) => event.eventType === 'text')
    .map((event) => String(event.payload.content))
    .join('\n');
  return { status: stream.done?.status, output, workspaceId: task.workspaceId };
}

/** Every file under `dir`, recursively. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  );

beforeAll(async () => {
  stack = await startEmbeddedStack({ prefix: 'agentry-isolation-', isolation: ISOLATION });
  ({ api } = stack);
  alphaKey = await api.key({ org: 'alpha' });
  const bravoKey = await api.key({ org: 'bravo' });
  const bravo = await runPrompt(
    bravoKey,
    'echo bravo-private > notes.txt\nmkdir -p artifacts\necho bravo-artifact > artifacts/report.txt',
  );
  expect(bravo.status).toBe('completed');
  bravoCode = workspacePaths(stack.dir, BRAVO, bravo.workspaceId).code;
  const files = await filesUnder(api.dir);
  const candidates = await Promise.all(
    files.map(async (file) => ((await readFile(file, 'utf8')) === 'bravo-artifact\n' ? file : undefined)),
  );
  bravoArtifactFile = candidates.find((file) => file !== undefined) ?? 'no file holds the artifact';
}, 120_000);

afterAll(async () => {
  await stack.stop();
}, 90_000);

describe('a confined workspace cannot reach another organization', () => {
  it('cannot read files in another organization\u2019s workspace', async () => {
    expect(await readFile(join(bravoCode, 'notes.txt'), 'utf8')).toBe('bravo-private\n');
    const alpha = await runPrompt(alphaKey, `cat ${bravoCode}/notes.txt`);
    expect(alpha.output).not.toContain('bravo-private');
    expect(alpha.status).toBe('failed');
  });

  it('cannot read another organization\u2019s artifacts in object storage', async () => {
    expect(await readFile(bravoArtifactFile, 'utf8')).toBe('bravo-artifact\n');
    const alpha = await runPrompt(alphaKey, `cat ${bravoArtifactFile}`);
    expect(alpha.output).not.toContain('bravo-artifact');
    expect(alpha.status).toBe('failed');
  });

  it('cannot write into another organization\u2019s workspace', async () => {
    await runPrompt(alphaKey, `echo planted > ${bravoCode}/planted.txt`);
    expect(await exists(join(bravoCode, 'planted.txt'))).toBe(false);
  });
});

describe('a confined workspace cannot reach the server', () => {
  it('cannot read the store\u2019s Secrets (API keys, runner tokens, signing keys)', async () => {
    const secrets = (await filesUnder(join(stack.dir, 'store'))).filter((file) => /secret/i.test(file));
    expect(secrets.length).toBeGreaterThan(0);
    const alpha = await runPrompt(alphaKey, secrets.map((file) => `cat ${file}`).join('\n'));
    for (const file of secrets)
      expect(alpha.output).not.toContain((await readFile(file, 'utf8')).slice(0, 60));
    expect(alpha.status).toBe('failed');
  });

  it('cannot list the data directory', async () => {
    const alpha = await runPrompt(alphaKey, `ls ${stack.dir} ${stack.dir}/workspaces`);
    expect(alpha.output).not.toContain('store');
    expect(alpha.output).not.toContain(BRAVO);
  });

  it('cannot write outside its workspace', async () => {
    await runPrompt(
      alphaKey,
      `echo planted > ${stack.dir}/planted.txt\necho planted > ${api.dir}/planted.txt`,
    );
    expect(await exists(join(stack.dir, 'planted.txt'))).toBe(false);
    expect(await exists(join(api.dir, 'planted.txt'))).toBe(false);
  });

  it('cannot see or signal the server process', async () => {
    const pid = process.pid;
    const alpha = await runPrompt(
      alphaKey,
      `kill -0 ${pid} && echo can-signal\ntest -r /proc/${pid}/environ && echo can-read\ntrue`,
    );
    expect(alpha.status).toBe('completed');
    expect(alpha.output).not.toContain('can-signal');
    expect(alpha.output).not.toContain('can-read');
  });
});

describe('a confined workspace still does its own work', () => {
  it('writes its /code, streams its events and has its artifacts synced', async () => {
    const alpha = await runPrompt(
      alphaKey,
      'mkdir -p artifacts\necho alpha-report > artifacts/a.txt\ncat artifacts/a.txt\necho "home $HOME"',
    );
    expect(alpha.status).toBe('completed');
    expect(alpha.output.split('\n')[0]).toBe('alpha-report');
    const res = await call(api, `/v1/workspaces/${alpha.workspaceId}/artifacts/a.txt`, { key: alphaKey });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('alpha-report\n');
  });

  it('a runner killed with SIGKILL takes its prompt\u2019s processes along and comes back for the next prompt', async () => {
    const task = await createTask(alphaKey, 'echo $$ > shell.pid\nsleep 600 &\necho $! > sleep.pid\nwait');
    const paths = workspacePaths(stack.dir, ALPHA, task.workspaceId);
    const pids = await until('the prompt to start its processes', async () => {
      const inner = await Promise.all(
        ['shell.pid', 'sleep.pid'].map(async (file) =>
          Number(await readFile(join(paths.code, file), 'utf8').catch(() => '0')),
        ),
      );
      if (inner.includes(0)) return undefined;
      const host = await Promise.all(inner.map((pid) => hostPidOf(pid, paths.code)));
      return host.every((pid) => pid !== undefined) ? host : undefined;
    });
    const record = RunnerRecordSchema.parse(JSON.parse(await readFile(paths.record, 'utf8')));
    process.kill(record.pid, 'SIGKILL');
    await until('every process of the prompt to be gone', () =>
      Promise.resolve(pids.every(processGone) ? true : undefined),
    );
    const stream = await readTaskStream(`${api.url}/v1/tasks/${task.id}/events`, {
      key: alphaKey,
      timeoutMs: 90_000,
    });
    expect(stream.done?.status).toBe('failed');
    const next = await runPrompt(alphaKey, 'echo back', task.workspaceId);
    expect(next).toMatchObject({ status: 'completed', output: 'back' });
  }, 120_000);
});
