import { CONTEXT_LAKE_NAME, ContextLakeType } from '../../crds/index.js';
import type { ObjectReader } from '../controller/index.js';
import { LAKE_CLIENT_ENV } from '../../platform/lake-client-env.js';

/**
 * What an agent is told when its organization has a context lake and the prompt can reach it: the
 * `agentry lake` client and its MCP mode (docs/lake-client.md). Short: it is read on every prompt.
 */
export const LAKE_INSTRUCTIONS = `## Your organization's data: the context lake

Your organization has a context lake: SQL (DuckDB) over its datasets. Query it with the \`agentry lake\` client, already authenticated in this workspace (read-only):

- \`agentry lake tables\` lists the datasets and views; \`agentry lake schema <table>\` shows a table's columns.
- \`agentry lake query "SELECT ..." --json\` runs a query (add \`--wait-for s3://bucket/key\` to wait until an object you just uploaded is in the answer).
- \`agentry lake mcp\` serves the same as MCP tools (\`lake_tables\`, \`lake_schema\`, \`lake_query\`) on stdio.

Prefer it to guessing about the organization's data; keep queries bounded (LIMIT, aggregates).`;

/** Whether the namespace has a context lake that is not being deleted (read where `reads` keeps it). */
export async function hasContextLake(reads: ObjectReader, namespace: string): Promise<boolean> {
  const lake = await reads.get(ContextLakeType, namespace, CONTEXT_LAKE_NAME);
  return lake !== undefined && lake.metadata.deletionTimestamp === undefined;
}

/**
 * The instructions the runner writes for the executor: the workspace's own, then the lake's when
 * the prompt has the lake client's variables and the organization has a lake.
 */
export async function instructionsWithLake(
  reads: ObjectReader,
  namespace: string,
  workspaceInstructions: string | undefined,
  promptEnv: Readonly<Record<string, string>>,
): Promise<string | undefined> {
  const own = workspaceInstructions === '' ? undefined : workspaceInstructions;
  if (promptEnv[LAKE_CLIENT_ENV.token] === undefined || !(await hasContextLake(reads, namespace))) return own;
  return own === undefined ? LAKE_INSTRUCTIONS : `${own.replace(/\n*$/, '')}\n\n${LAKE_INSTRUCTIONS}`;
}
