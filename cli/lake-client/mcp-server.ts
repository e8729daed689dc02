import { createInterface } from 'node:readline';
import { z } from 'zod';
import { ObjectRefSchema, MAX_WAIT_FOR_MS } from '../../platform/lake-protocol.js';
import { AGENTRY_VERSION } from '../../platform/version.js';
import type { LakeApi } from './lake-api.js';
import { LakeClientError } from './lake-api.js';
import { describeTable, listTables, runQuery } from './operations.js';

/**
 * `agentry lake mcp`: the lake client as an MCP server on stdio (newline-delimited JSON-RPC 2.0,
 * the MCP stdio transport), so any executor that takes MCP servers gets the lake as tools. Only
 * what the three tools need: initialize, ping, tools/list, tools/call.
 */

/** The protocol revision answered when the client asks for one this server does not know. */
const PROTOCOL_VERSION = '2025-06-18';
const KNOWN_VERSIONS = new Set(['2024-11-05', '2025-03-26', '2025-06-18']);

const RequestSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number()]).optional(),
  method: z.string(),
  params: z.record(z.string(), z.unknown()).optional(),
});

const TablesInputSchema = z.strictObject({});
const SchemaInputSchema = z.strictObject({
  table: z.string().min(1).describe('A dataset or view name, as lake_tables lists them'),
});
const QueryInputSchema = z.strictObject({
  sql: z.string().min(1).describe('One reading SQL statement (DuckDB dialect): SELECT, DESCRIBE, EXPLAIN'),
  waitFor: z
    .array(ObjectRefSchema)
    .max(100)
    .optional()
    .describe('Objects the answer must include (e.g. one just uploaded): { bucket, key, etag? }'),
  waitTimeoutMs: z.number().int().min(1).max(MAX_WAIT_FOR_MS).optional().describe('Bound of that wait'),
});

interface Tool {
  description: string;
  input: z.ZodType;
  run(api: LakeApi, input: unknown, maxRows: number): Promise<unknown>;
}

const TOOLS: Readonly<Record<string, Tool>> = {
  lake_tables: {
    description: "The organization's context lake: its datasets and views (the tables SQL can name)",
    input: TablesInputSchema,
    run: async (api) => ({ tables: await listTables(api) }),
  },
  lake_schema: {
    description: "A context-lake table's columns and their types",
    input: SchemaInputSchema,
    run: async (api, input) => {
      const { table } = SchemaInputSchema.parse(input);
      return { table, columns: await describeTable(api, table) };
    },
  },
  lake_query: {
    description:
      "Run one read-only SQL query (DuckDB) over the organization's context lake; rows as JSON, bounded (aggregate or LIMIT large tables)",
    input: QueryInputSchema,
    run: async (api, input, maxRows) => {
      const { sql, waitFor, waitTimeoutMs } = QueryInputSchema.parse(input);
      return runQuery(api, sql, {
        maxRows,
        ...(waitFor === undefined ? {} : { waitFor }),
        ...(waitTimeoutMs === undefined ? {} : { waitTimeoutMs }),
      });
    },
  },
};

const toolList = () =>
  Object.entries(TOOLS).map(([name, tool]) => ({
    name,
    description: tool.description,
    inputSchema: z.toJSONSchema(tool.input),
  }));

const CallParamsSchema = z.object({
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()).optional(),
});

/** A tool's failure is its answer (`isError`), for the model to read: the lake's message, never a stack. */
async function callTool(api: LakeApi, params: unknown, maxRows: number): Promise<unknown> {
  const call = CallParamsSchema.safeParse(params);
  if (!call.success) throw new RpcError(-32602, 'tools/call needs a tool name and its arguments');
  const tool = Object.hasOwn(TOOLS, call.data.name) ? TOOLS[call.data.name] : undefined;
  if (tool === undefined) throw new RpcError(-32602, `unknown tool ${call.data.name}`);
  try {
    const result = await tool.run(api, call.data.arguments ?? {}, maxRows);
    return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
  } catch (err) {
    const message =
      err instanceof LakeClientError
        ? err.message
        : err instanceof z.ZodError
          ? `invalid arguments: ${err.issues.map((issue) => `${issue.path.join('.') || 'input'}: ${issue.message}`).join('; ')}`
          : 'the lake client failed';
    return { content: [{ type: 'text', text: message }], isError: true };
  }
}

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

async function answerOf(api: LakeApi, method: string, params: unknown, maxRows: number): Promise<unknown> {
  switch (method) {
    case 'initialize': {
      const asked = z.object({ protocolVersion: z.string() }).safeParse(params);
      const version =
        asked.success && KNOWN_VERSIONS.has(asked.data.protocolVersion)
          ? asked.data.protocolVersion
          : PROTOCOL_VERSION;
      return {
        protocolVersion: version,
        capabilities: { tools: {} },
        serverInfo: { name: 'agentry-lake', version: AGENTRY_VERSION },
      };
    }
    case 'ping':
      return {};
    case 'tools/list':
      return { tools: toolList() };
    case 'tools/call':
      return callTool(api, params, maxRows);
    default:
      throw new RpcError(-32601, `method ${method} is not served`);
  }
}

/** One line in, at most one line out (notifications get none). */
async function handleLine(api: LakeApi, line: string, maxRows: number): Promise<unknown> {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'not JSON' } };
  }
  const request = RequestSchema.safeParse(json);
  if (!request.success)
    return { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'not a JSON-RPC 2.0 request' } };
  const { id, method, params } = request.data;
  if (id === undefined) return undefined;
  try {
    return { jsonrpc: '2.0', id, result: await answerOf(api, method, params, maxRows) };
  } catch (err) {
    const error =
      err instanceof RpcError
        ? { code: err.code, message: err.message }
        : { code: -32603, message: 'internal error' };
    return { jsonrpc: '2.0', id, error };
  }
}

/** Serves until stdin ends; answers go out as they are ready (a slow query does not hold a ping). */
export async function serveLakeMcp(
  api: LakeApi,
  io: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream; maxRows: number },
): Promise<number> {
  const pending = new Set<Promise<void>>();
  for await (const line of createInterface({ input: io.input, crlfDelay: Infinity })) {
    if (line.trim() === '') continue;
    const answered = handleLine(api, line, io.maxRows).then((message) => {
      if (message !== undefined) io.output.write(`${JSON.stringify(message)}\n`);
    });
    pending.add(answered);
    void answered.finally(() => pending.delete(answered));
  }
  await Promise.all(pending);
  return 0;
}
