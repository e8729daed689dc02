// `agentry lake tables|schema|query|mcp` spawned as real processes against `agentry serve`, with
// the token of a live prompt (a `shell` prompt that prints it, then waits): what an agent in that
// workspace runs. Canceling the prompt revokes the token, and the client says so.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { markedLines, startLakeClientStack, textLines } from '../../support/lake-client-stack.js';
import type { LakeClientStack } from '../../support/lake-client-stack.js';
import { readTaskStream } from '../../support/sse.js';
import { collectOutput, runAgentry, spawnAgentry } from '../../support/spawn-cli.js';

let stack: LakeClientStack;
let taskId = '';
let clientEnv: Record<string, string> = {};

/** The token the task's prompt printed: its events are read again, one more each time, until the line is there. */
async function printedToken(id: string): Promise<string | undefined> {
  for (let count = 1; count <= 10; count++) {
    const stream = await readTaskStream(`${stack.url}/v1/tasks/${id}/events`, {
      key: stack.apiKey,
      stopAfter: count,
      timeoutMs: 60_000,
    });
    const [token] = markedLines(textLines(stream.events), 'TOKEN');
    if (token !== undefined) return token;
  }
  return undefined;
}

beforeAll(async () => {
  stack = await startLakeClientStack();
  taskId = await stack.startShellTask('echo "TOKEN $AGENTRY_LAKE_TOKEN"\nsleep 600');
  const token = await printedToken(taskId);
  if (token === undefined) throw new Error('the prompt printed no token');
  clientEnv = { AGENTRY_LAKE_URL: `${stack.url}/v1/context-lake`, AGENTRY_LAKE_TOKEN: token };
}, 150_000);

afterAll(async () => {
  await stack.stop();
});

const ResponseSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.number(), z.string(), z.null()]),
  result: z.record(z.string(), z.unknown()).optional(),
  error: z.object({ code: z.number(), message: z.string() }).optional(),
});
type Response = z.infer<typeof ResponseSchema>;

/** Sends each request as a line to `agentry lake mcp`, closes its stdin, and returns its answers by id. */
async function mcpSession(requests: readonly object[]): Promise<Map<unknown, Response>> {
  const child = spawnAgentry(['lake', 'mcp'], clientEnv);
  const output = collectOutput(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  for (const request of requests) child.stdin.write(`${JSON.stringify(request)}\n`);
  child.stdin.end();
  expect(await exited).toBe(0);
  const answers = output()
    .stdout.split('\n')
    .filter((line) => line !== '')
    .map((line) => ResponseSchema.parse(JSON.parse(line)));
  return new Map(answers.map((answer) => [answer.id, answer]));
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
};
const INITIALIZED = { jsonrpc: '2.0', method: 'notifications/initialized' };
const call = (id: number, name: string, args: object) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

const ToolResultSchema = z.object({
  content: z.array(z.object({ type: z.literal('text'), text: z.string() })),
  isError: z.boolean().optional(),
});

describe('agentry lake mcp', () => {
  it('initializes, lists the three tools and answers lake_query with the rows', async () => {
    const answers = await mcpSession([
      INITIALIZE,
      INITIALIZED,
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      call(3, 'lake_query', {
        sql: 'SELECT city, sum(sales)::INTEGER AS total FROM sales GROUP BY city ORDER BY city',
      }),
    ]);
    expect(answers.get(1)?.result).toMatchObject({
      protocolVersion: '2025-06-18',
      capabilities: { tools: {} },
      serverInfo: { name: 'agentry-lake' },
    });
    const tools = z
      .object({
        tools: z.array(z.object({ name: z.string(), inputSchema: z.looseObject({ type: z.string() }) })),
      })
      .parse(answers.get(2)?.result);
    expect(tools.tools.map((tool) => tool.name)).toEqual(['lake_tables', 'lake_schema', 'lake_query']);
    const result = ToolResultSchema.parse(answers.get(3)?.result);
    expect(result.isError).toBeUndefined();
    expect(JSON.parse(result.content[0]?.text ?? '')).toMatchObject({
      rows: [
        { city: 'Lima', total: 30 },
        { city: 'Oslo', total: 17 },
      ],
    });
  }, 60_000);

  it("answers a query the lake refuses as the tool's error, with the lake's message", async () => {
    const answers = await mcpSession([INITIALIZE, call(2, 'lake_query', { sql: 'DROP TABLE sales' })]);
    const result = ToolResultSchema.parse(answers.get(2)?.result);
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toMatch(/only queries that read/);
  }, 60_000);
});

describe('agentry lake tables, schema and query', () => {
  it('lists the datasets as JSON when stdout is not a terminal', async () => {
    const { code, stdout } = await runAgentry(['lake', 'tables'], clientEnv);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({
      tables: [{ name: 'sales', kind: 'dataset', definition: expect.stringMatching(/sales\.csv$/) }],
    });
  }, 60_000);

  it("describes a table's columns", async () => {
    const { code, stdout } = await runAgentry(['lake', 'schema', 'sales', '--json'], clientEnv);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({
      table: 'sales',
      columns: [
        { name: 'city', type: 'VARCHAR', nullable: true },
        { name: 'sales', type: 'BIGINT', nullable: true },
      ],
    });
  }, 60_000);

  it('cuts a large answer to --max-rows and says so', async () => {
    const { code, stdout } = await runAgentry(
      ['lake', 'query', 'SELECT range AS n FROM range(500)', '--json', '--max-rows', '10'],
      clientEnv,
    );
    expect(code).toBe(0);
    const answer = z
      .object({ rows: z.array(z.object({ n: z.number() })), truncated: z.boolean(), note: z.string() })
      .parse(JSON.parse(stdout));
    expect(answer.rows).toHaveLength(10);
    expect(answer.truncated).toBe(true);
    expect(answer.note).toMatch(/first 10 rows; 490 more rows left out/);
  }, 60_000);

  it('says which variables are missing outside a workspace, and exits 1', async () => {
    const { code, stderr } = await runAgentry(['lake', 'query', 'SELECT 1'], {});
    expect(code).toBe(1);
    expect(stderr).toMatch(/^agentry lake: AGENTRY_LAKE_URL and AGENTRY_LAKE_TOKEN are not set/);
  }, 60_000);
});

describe('a canceled prompt', () => {
  it("revokes its token: the client's next query is refused with the reason", async () => {
    const canceled = await fetch(`${stack.url}/v1/tasks/${taskId}/cancel`, {
      method: 'POST',
      headers: stack.headers,
    });
    expect(canceled.status).toBe(200);
    await readTaskStream(`${stack.url}/v1/tasks/${taskId}/events`, { key: stack.apiKey, timeoutMs: 60_000 });
    const { code, stderr } = await runAgentry(['lake', 'query', 'SELECT 1'], clientEnv);
    expect(code).toBe(1);
    expect(stderr).toMatch(/the lake token was refused .*valid only while the prompt that received it runs/);
  }, 90_000);
});
