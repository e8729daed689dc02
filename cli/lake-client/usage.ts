import { LAKE_TOKEN_VARIABLE, LAKE_URL_VARIABLE } from './lake-api.js';
import { DEFAULT_MAX_ROWS } from './operations.js';

/** `agentry lake <action>`: the client's actions; `agentry lake` without one is the lake server. */
export const LAKE_CLIENT_ACTIONS = ['tables', 'schema', 'query', 'mcp'] as const;
export type LakeClientAction = (typeof LAKE_CLIENT_ACTIONS)[number];

export const isLakeClientAction = (word: string | undefined): word is LakeClientAction =>
  LAKE_CLIENT_ACTIONS.some((action) => action === word);

export const LAKE_CLIENT_USAGE = `usage: agentry lake tables [--json]
       agentry lake schema <table> [--json]
       agentry lake query "<SQL>" [--json] [--max-rows N] [--wait-for OBJECT]... [--wait-timeout DURATION]
       agentry lake mcp

The context-lake client inside a workspace: your organization's datasets and views, read-only,
through the API server with the prompt's token. Output is a table on a terminal, JSON otherwise.

  tables              the datasets and views SQL can name
  schema <table>      a table's columns and types (DESCRIBE)
  query "<SQL>"       one reading statement (SELECT, DESCRIBE, EXPLAIN ...)
  mcp                 an MCP server on stdin/stdout with the tools lake_tables, lake_schema, lake_query

options:
  --json              JSON output, also on a terminal
  --max-rows N        the most rows shown (default ${DEFAULT_MAX_ROWS}); the rest is left out with a note
  --wait-for OBJECT   answer only once this object is in the lake (fresh data you just uploaded):
                      s3://bucket/key, an https URL or a file path, #ETAG at the end for one version
  --wait-timeout D    how long to wait for those objects (default 10s, at most 60s)

settings (set by the operator for each prompt):
  ${LAKE_URL_VARIABLE}    the lake's API (<API server>/v1/context-lake)
  ${LAKE_TOKEN_VARIABLE}  the prompt's token: read-only, valid while the prompt runs

example:
  agentry lake query "SELECT city, sum(sales) AS total FROM sales GROUP BY city" --json
`;
