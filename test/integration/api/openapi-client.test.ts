// A client generated from the OpenAPI document works against the server: openapi-typescript turns
// the document into types (one per named component), a small program written against those types
// with openapi-fetch type-checks under the project's strict settings, and, run against a real API
// server on loopback, creates a task and reads it back.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { z } from 'zod';
import { call, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';

/** Written against the generated types only: if they disagree with the API, it does not compile. */
const PROGRAM = `import createClient from 'openapi-fetch';
import type { CreateTaskRequest, CreatedTask, Task, paths } from './schema.js';

export async function createAndReadTask(
  baseUrl: string,
  key: string,
): Promise<{ created: CreatedTask; task: Task }> {
  const client = createClient<paths>({ baseUrl, headers: { 'x-api-key': key } });
  const body: CreateTaskRequest = { prompt: 'Describe this repository', title: 'Generated client' };
  const created = await client.POST('/v1/tasks', { body });
  if (created.data === undefined) throw new Error(\`POST /v1/tasks: \${created.response.status}\`);
  const read = await client.GET('/v1/tasks/{id}', { params: { path: { id: created.data.id } } });
  if (read.data === undefined) throw new Error(\`GET /v1/tasks/{id}: \${read.response.status}\`);
  const task: Task = read.data;
  const status: 'running' | 'completed' | 'failed' | 'canceled' = task.status;
  return { created: created.data, task: { ...task, status } };
}
`;

const COMPILER_OPTIONS: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  skipLibCheck: true,
};

const ResultSchema = z.object({
  created: z.object({ id: z.string(), workspaceId: z.string(), status: z.string() }),
  task: z.object({ id: z.string(), title: z.string(), status: z.string(), prompts: z.array(z.unknown()) }),
});

let api: TestApi;
let dir: string;

beforeAll(async () => {
  api = await startTestApi();
  dir = await mkdtemp(join(tmpdir(), 'agentry-openapi-client-'));
  // The program imports openapi-fetch as a package: the project's node_modules, seen from here.
  await symlink(resolve('node_modules'), join(dir, 'node_modules'), 'dir');
  await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  const document = await (await call(api, '/v1/openapi.json')).text();
  const types = await openapiTS(document, { rootTypes: true, rootTypesNoSchemaPrefix: true });
  await writeFile(join(dir, 'schema.ts'), astToString(types));
  await writeFile(join(dir, 'program.ts'), PROGRAM);
}, 60_000);
afterAll(async () => {
  await api.stop();
  await rm(dir, { recursive: true, force: true });
});

it('generates named types for the resources of the API', () => {
  const schema = ts.sys.readFile(join(dir, 'schema.ts')) ?? '';
  for (const name of ['Task', 'AgentComputer', 'Webhook', 'Artifact', 'TaskEvent', 'Error', 'LakeStatus'])
    expect(schema).toMatch(new RegExp(`export type ${name} = components\\['schemas'\\]\\['${name}'\\]`));
});

it('type-checks a program written against the generated client', () => {
  const program = ts.createProgram([join(dir, 'program.ts'), join(dir, 'schema.ts')], COMPILER_OPTIONS);
  const problems = ts
    .getPreEmitDiagnostics(program)
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  expect(problems).toEqual([]);
}, 60_000);

it('creates a task and reads it back through the generated client', async () => {
  const key = await api.key({ org: 'generated' });
  const source = ts.sys.readFile(join(dir, 'program.ts')) ?? '';
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  await writeFile(join(dir, 'program.js'), outputText);
  const loaded: unknown = await import(pathToFileURL(join(dir, 'program.js')).href);
  const { createAndReadTask } = z
    .object({
      createAndReadTask: z.function({ input: [z.string(), z.string()], output: z.promise(z.unknown()) }),
    })
    .parse(loaded);
  const { created, task } = ResultSchema.parse(await createAndReadTask(api.url, key));
  expect(task).toMatchObject({ id: created.id, title: 'Generated client', status: 'running' });
  expect(task.prompts).toHaveLength(1);
});
