// Per-workspace agent configuration and skills as a hosted-service client uses them, on the embedded
// default with real runner processes: PATCH /v1/agent-computers/:id (instructions, env), POST
// /v1/tasks `env` and `skills`, with skills fetched from a git server on loopback.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { OrganizationType, SecretType, TaskType } from '../../../crds/index.js';
import { workspacePaths } from '../../../operator/runtimes/process/workspace.js';
import { ExecutorCatalog, ExecutorDefinitionSchema } from '../../../platform/executor-catalog.js';
import { SkillCatalog } from '../../../platform/skill-catalog.js';
import { updateWithRetry } from '../../../api/optimistic-update.js';
import { call, eventually } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { startEmbeddedStack } from '../../support/embedded-stack.js';
import type { EmbeddedStack } from '../../support/embedded-stack.js';
import { startGitHttpServer } from '../../support/git-http-server.js';
import type { GitHttpServer } from '../../support/git-http-server.js';
import { readTaskStream } from '../../support/sse.js';

const NAMESPACE = 'agentry-org-acme';
let stack: EmbeddedStack;
let api: TestApi;
let git: GitHttpServer;
let key: string;

/** A shell executor that reads skills where Claude Code does, so skill installs can be observed. */
const skilledShell = ExecutorDefinitionSchema.parse({
  name: 'skilled-shell',
  format: 'lines',
  command: 'bash',
  args: ['{promptFile}'],
  promptVia: 'file',
  skillsDir: '.claude/skills',
  instructionsFile: 'CLAUDE.md',
});

const AgentComputerSchema = z.object({
  id: z.string(),
  name: z.string(),
  agentInstructions: z.string().nullable(),
  envNames: z.array(z.string()),
});
const CreatedSchema = z.object({ id: z.string(), workspaceId: z.string() });
const ErrorSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

beforeAll(async () => {
  git = await startGitHttpServer();
  const catalogRepo = await git.publish('house-skills', {
    'skills/house-style/SKILL.md': '---\nname: house-style\ndescription: How we write\n---\nUse tabs.\n',
  });
  stack = await startEmbeddedStack({
    prefix: 'agentry-agent-config-',
    executors: new ExecutorCatalog([skilledShell]),
    skills: new SkillCatalog([{ slug: 'house-style', git: catalogRepo, path: 'skills/house-style' }]),
  });
  api = stack.api;
  key = await api.key({ org: 'acme' });
  // Every test makes a workspace of its own. The operator writes the new organization's status
  // meanwhile, so the change may meet a conflict and is tried again.
  await api.organization('acme');
  await updateWithRetry(api.store, OrganizationType, undefined, 'acme', (org) => ({
    ...org,
    spec: { ...org.spec, limits: { ...org.spec.limits, agentComputers: 100 } },
  }));
  await eventually(
    () => api.readModel.organizations.get(undefined, 'acme')?.spec.limits.agentComputers === 100,
  );
}, 60_000);

afterAll(async () => {
  await stack.stop();
  await git.stop();
}, 90_000);

async function createWorkspace(): Promise<string> {
  const res = await call(api, '/v1/agent-computers', { key, method: 'POST', body: { name: 'configured' } });
  expect(res.status).toBe(201);
  return AgentComputerSchema.parse(await res.json()).id;
}

const patch = (id: string, body: unknown) =>
  call(api, `/v1/agent-computers/${id}`, { key, method: 'PATCH', body });

async function runTask(body: Record<string, unknown>) {
  const res = await call(api, '/v1/tasks', { key, method: 'POST', body: { executor: 'shell', ...body } });
  expect(res.status).toBe(201);
  const created = CreatedSchema.parse(await res.json());
  const stream = await readTaskStream(`${api.url}/v1/tasks/${created.id}/events`, { key, timeoutMs: 90_000 });
  const text = stream.events
    .filter((event) => event.eventType === 'text')
    .map((event) => String(event.payload.content))
    .join('\n');
  const warnings = stream.events
    .filter((event) => event.eventType === 'warning')
    .map((event) => event.payload);
  return { ...created, done: stream.done, text, warnings };
}

const codeDir = (workspaceId: string): string => workspacePaths(stack.dir, NAMESPACE, workspaceId).code;

describe('PATCH /v1/agent-computers/:id', () => {
  it('sets agent instructions (snake_case) and env, and GET shows the instructions and only the env names', async () => {
    const id = await createWorkspace();
    const res = await patch(id, {
      agent_instructions: 'Always answer in French.',
      env: { MY_TOKEN: 'tok-secret-1' },
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain('tok-secret-1');
    const got = AgentComputerSchema.parse(
      await (await call(api, `/v1/agent-computers/${id}`, { key })).json(),
    );
    expect(got).toMatchObject({ agentInstructions: 'Always answer in French.', envNames: ['MY_TOKEN'] });
  });

  it('accepts camelCase agentInstructions and clears them with null', async () => {
    const id = await createWorkspace();
    expect((await patch(id, { agentInstructions: 'Be brief.' })).status).toBe(200);
    const cleared = AgentComputerSchema.parse(await (await patch(id, { agentInstructions: null })).json());
    expect(cleared.agentInstructions).toBeNull();
  });

  it.each([['PATH'], ['AGENTRY_RUNNER_TOKEN'], ['LD_PRELOAD'], ['1BAD'], ['has-dash']])(
    'refuses the env name %s with 400 and changes nothing',
    async (name) => {
      const id = await createWorkspace();
      const res = await patch(id, { name: 'renamed', env: { [name]: 'x' } });
      expect(res.status).toBe(400);
      expect(ErrorSchema.parse(await res.json()).error.code).toBe('validation_error');
      const got = AgentComputerSchema.parse(
        await (await call(api, `/v1/agent-computers/${id}`, { key })).json(),
      );
      expect(got).toMatchObject({ name: 'configured', envNames: [] });
    },
  );

  it('refuses an env value over 32 KiB with 400', async () => {
    const id = await createWorkspace();
    const res = await patch(id, { env: { BIG: 'x'.repeat(33 * 1024) } });
    expect(res.status).toBe(400);
  });

  it("answers 404 for another organization's agent computer", async () => {
    const id = await createWorkspace();
    const other = await api.key({ org: 'globex' });
    const res = await call(api, `/v1/agent-computers/${id}`, {
      key: other,
      method: 'PATCH',
      body: { name: 'mine' },
    });
    expect(res.status).toBe(404);
  });
});

describe('agent instructions and env in the executor', () => {
  it('appends the instructions to an existing AGENTS.md once, replaces them on change, and sets the env', async () => {
    const id = await createWorkspace();
    await mkdir(codeDir(id), { recursive: true });
    await writeFile(join(codeDir(id), 'AGENTS.md'), '# Repository rules\nRun the tests.\n');
    await patch(id, { agent_instructions: 'First version.', env: { GREETING: 'hello-from-env' } });
    const first = await runTask({ workspaceId: id, prompt: 'echo "G=$GREETING"' });
    expect(first.done?.status).toBe('completed');
    expect(first.text).toContain('G=hello-from-env');
    await patch(id, { agent_instructions: 'Second version.' });
    const second = await runTask({ workspaceId: id, prompt: 'cat AGENTS.md' });
    expect(second.done?.status).toBe('completed');
    const file = await readFile(join(codeDir(id), 'AGENTS.md'), 'utf8');
    expect(file.startsWith('# Repository rules\nRun the tests.\n')).toBe(true);
    expect(file).toContain('Second version.');
    expect(file).not.toContain('First version.');
    expect(file.match(/agentry:agent-instructions:begin/g)).toHaveLength(1);
  }, 120_000);

  it("gives a task's env to its prompts, keeps it out of the Task resource, and lets it win over the workspace's", async () => {
    const id = await createWorkspace();
    await patch(id, { env: { COLOR: 'blue', SHAPE: 'circle' } });
    const run = await runTask({
      workspaceId: id,
      prompt: 'echo "$COLOR $SHAPE"',
      env: { COLOR: 'task-red-value' },
    });
    expect(run.text).toContain('task-red-value circle');
    const task = await api.store.get(TaskType, NAMESPACE, run.id);
    // The prompt printed the value, so it is in the result; the resource's spec and metadata never hold it.
    expect(JSON.stringify({ spec: task?.spec, metadata: task?.metadata })).not.toContain('task-red-value');
    expect(task?.spec.envNames).toEqual(['COLOR']);
    const secret = await api.store.get(SecretType, NAMESPACE, `task-env-${run.id}`);
    expect(secret?.metadata.ownerReferences?.[0]?.uid).toBe(task?.metadata.uid);
  }, 120_000);
});

describe('skills', () => {
  it('runs the prompt and warns about a slug the catalog does not have', async () => {
    const run = await runTask({ executor: 'skilled-shell', prompt: 'echo ran', skills: ['deep-research'] });
    expect(run.done?.status).toBe('completed');
    expect(run.text).toContain('ran');
    expect(run.warnings).toEqual([
      expect.objectContaining({ code: 'skill_unknown', skill: 'deep-research' }),
    ]);
  }, 120_000);

  it('installs a catalog skill from a git repository where the executor reads skills', async () => {
    const run = await runTask({
      executor: 'skilled-shell',
      prompt: 'cat .claude/skills/house-style/SKILL.md',
      skills: ['house-style'],
    });
    expect(run.warnings).toEqual([]);
    expect(run.text).toContain('Use tabs.');
  }, 120_000);

  it('installs a github: reference from a loopback git server', async () => {
    const url = await git.publish('pdf-tools', {
      'SKILL.md': '---\nname: pdf-tools\ndescription: PDFs\n---\nUse qpdf.\n',
    });
    const run = await runTask({
      executor: 'skilled-shell',
      prompt: 'cat .claude/skills/pdf-tools/SKILL.md',
      skills: [`github:${url}#main`],
    });
    expect(run.warnings).toEqual([]);
    expect(run.text).toContain('Use qpdf.');
  }, 120_000);

  it('warns, and runs the prompt, when the executor has no skills', async () => {
    const run = await runTask({ prompt: 'echo plain', skills: ['house-style'] });
    expect(run.done?.status).toBe('completed');
    expect(run.warnings).toEqual([expect.objectContaining({ code: 'skills_unsupported' })]);
  }, 120_000);
});
