// The lake client inside a workspace, on the embedded default end to end: `agentry serve` as a real
// child process; a `shell` prompt runs `agentry lake query ... --json` in its workspace against the
// organization's lake (a file dataset) with the prompt token the operator gave it, and tries the
// same token on routes it must not reach; after the prompt ends the token is refused.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import {
  AGENTS_MD_EXECUTOR,
  markedLines,
  startLakeClientStack,
  textLines,
} from '../../support/lake-client-stack.js';
import type { LakeClientStack } from '../../support/lake-client-stack.js';
import { readTaskStream } from '../../support/sse.js';

let stack: LakeClientStack;

/** What the prompt prints, one marked line per check, so the test can find each in the events. */
const PROMPT = [
  'set -u',
  'API="${AGENTRY_LAKE_URL%/v1/context-lake}"',
  'echo "TOKEN $AGENTRY_LAKE_TOKEN"',
  `echo "ROWS $(agentry lake query "SELECT city, sum(sales)::INTEGER AS total FROM sales GROUP BY city ORDER BY city" --json)"`,
  'status() { echo "STATUS $1 $2 $(curl -s -o /dev/null -w "%{http_code}" -X "$1" -H "Authorization: Bearer $AGENTRY_LAKE_TOKEN" -H "content-type: application/json" ${3:+-d "$3"} "$API$2")"; }',
  'status GET /v1/context-lake/datasets',
  'status GET /v1/context-lake/views',
  'status GET /v1/context-lake/status',
  'status POST /v1/context-lake/datasets \'{"name":"other","from":"https://example.com/x.csv"}\'',
  'status DELETE /v1/context-lake/datasets/sales',
  'status GET /v1/context-lake/config',
  'status POST /v1/context-lake/stop',
  'status GET /v1/tasks',
  'status POST /v1/tasks \'{"executor":"shell","prompt":"echo escaped"}\'',
  'status GET /v1/agent-computers',
  'status GET /v1/webhooks',
].join('\n');

beforeAll(async () => {
  stack = await startLakeClientStack();
}, 90_000);

afterAll(async () => {
  await stack.stop();
});

/** The prompt's stdout lines, once its task has ended. */
async function promptOutput(
  prompt: string,
  executor?: string,
): Promise<{ status: string | undefined; lines: string[] }> {
  const id = await stack.startShellTask(prompt, executor);
  const stream = await readTaskStream(`${stack.url}/v1/tasks/${id}/events`, {
    key: stack.apiKey,
    timeoutMs: 240_000,
  });
  return { status: stream.done?.status, lines: textLines(stream.events) };
}

describe('the lake client in a workspace', () => {
  let output: { status: string | undefined; lines: string[] };

  beforeAll(async () => {
    output = await promptOutput(PROMPT);
  }, 250_000);

  it("answers `agentry lake query --json` with the organization's rows, authenticated by the prompt token", () => {
    expect(output.status).toBe('completed');
    const [rows] = markedLines(output.lines, 'ROWS');
    expect(rows).toBeDefined();
    const answer = z
      .object({ rows: z.array(z.record(z.string(), z.unknown())), truncated: z.boolean() })
      .parse(JSON.parse(rows ?? ''));
    expect(answer.rows).toEqual([
      { city: 'Lima', total: 30 },
      { city: 'Oslo', total: 17 },
    ]);
    expect(answer.truncated).toBe(false);
  });

  it('lets the token read the lake, and refuses it on every write route and every other API', () => {
    const statuses = Object.fromEntries(
      markedLines(output.lines, 'STATUS').map((line) => {
        const parts = line.split(' ');
        return [`${parts[0]} ${parts[1]}`, parts[2]];
      }),
    );
    expect(statuses).toEqual({
      'GET /v1/context-lake/datasets': '200',
      'GET /v1/context-lake/views': '200',
      'GET /v1/context-lake/status': '200',
      'POST /v1/context-lake/datasets': '403',
      'DELETE /v1/context-lake/datasets/sales': '403',
      'GET /v1/context-lake/config': '403',
      'POST /v1/context-lake/stop': '403',
      'GET /v1/tasks': '403',
      'POST /v1/tasks': '403',
      'GET /v1/agent-computers': '403',
      'GET /v1/webhooks': '403',
    });
  });

  it("refuses the token with 401 once its prompt has ended, in the lake's error shape", async () => {
    const [token] = markedLines(output.lines, 'TOKEN');
    expect(token).toMatch(/^agp1\./);
    const res = await fetch(`${stack.url}/v1/context-lake/sql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token ?? ''}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'SELECT 1 AS one' }),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      code: 'invalid_api_key',
      error: 'The prompt token is invalid, or its prompt has ended',
    });
  });
});

describe("the agent's instructions", () => {
  it('tell an executor that reads AGENTS.md about the lake client and its MCP mode, since the organization has a lake', async () => {
    const { status, lines } = await promptOutput('cat AGENTS.md', AGENTS_MD_EXECUTOR);
    expect(status).toBe('completed');
    const text = lines.join('\n');
    expect(text).toContain("## Your organization's data: the context lake");
    expect(text).toContain('agentry lake query');
    expect(text).toContain('agentry lake mcp');
  }, 250_000);
});
