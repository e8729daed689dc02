import { parseArgs } from 'node:util';
import { LakeConfigSchema, loadLakeConfig } from '../lake/config.js';
import { createLogger } from '../platform/log.js';
import { AGENTRY_VERSION } from '../platform/version.js';
import type { CliCommand } from './command.js';
import { actionOf } from './command.js';
import { settingsHelp } from './settings-help.js';
import { LAKE_CLIENT_USAGE, isLakeClientAction } from './lake-client/usage.js';

const SERVER_USAGE = `usage: agentry lake
       agentry lake tables|schema|query|mcp ...   the client inside a workspace (agentry lake query --help)

The context-lake server of an organization: loads its datasets into DuckDB and answers SQL. The
operator starts it (a Pod, a VM or, with \`agentry serve\`, a local process); prints
\`agentry lake listening on URL\` once it listens.

${settingsHelp(LakeConfigSchema, [
  ['AGENTRY_LAKE_TOKEN', 'the token every request must carry (required, 32+ characters)'],
  ['AGENTRY_LAKE_PORT', 'port it listens on (0: any free port)'],
  ['AGENTRY_LAKE_HOST', 'address it listens on'],
  ['AGENTRY_LAKE_DATA_DIR', "the database file (kept), downloads and DuckDB's spill files"],
  ['AGENTRY_LAKE_MEMORY_LIMIT', "DuckDB's memory limit, e.g. 3GB (default 3/4 of the memory)"],
  ['AGENTRY_LAKE_THREADS', "DuckDB's threads (default one per CPU)"],
  ['AGENTRY_LAKE_QUERY_TIMEOUT', 'a query running longer is interrupted'],
  ['AGENTRY_LAKE_ROW_LIMIT', 'the most rows one answer holds'],
  ['AGENTRY_LAKE_CONNECTORS', 'dataset connectors allowed, comma separated: s3, https, file'],
  ['AGENTRY_LAKE_FILE_ROOTS', 'directories file:// datasets may read, comma separated'],
  ['AGENTRY_LAKE_PRIVATE_TARGETS', 'whether downloads may reach loopback and private addresses'],
  ['AGENTRY_LAKE_MAX_RESULT_BYTES', "the largest answer, in bytes of its rows' JSON"],
  ['AGENTRY_LOG_LEVEL', 'fatal, error, warn, info, debug, trace or silent'],
])}
example:
  AGENTRY_LAKE_TOKEN=$(openssl rand -hex 32) AGENTRY_LAKE_DATA_DIR=/tmp/lake \\
    AGENTRY_LAKE_HOST=127.0.0.1 agentry lake
`;

/** The client's module, loaded only for its actions: it needs neither DuckDB nor the server. */
const lakeClient = () => import('./lake-client/command.js');

/**
 * `agentry lake` as a command: without arguments the lake server (as the operator starts it); with
 * `tables`, `schema`, `query` or `mcp`, the client a workspace's agent uses (docs/lake-client.md).
 */
export const lakeCommand: CliCommand = {
  usage: (action) => (isLakeClientAction(action) ? LAKE_CLIENT_USAGE : SERVER_USAGE),
  run: async (args) => {
    if (isLakeClientAction(actionOf(args))) return (await lakeClient()).runLakeClient(args);
    parseArgs({ args, options: {} });
    return runLakeCommand();
  },
};

/**
 * `agentry lake`: the context-lake server inside an organization's lake workload. Prints exactly
 * one line on stdout once it listens, `agentry lake listening on http://HOST:PORT`, which the
 * process runtime reads to learn the port; stops gracefully on SIGTERM or SIGINT.
 */
export async function runLakeCommand(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  // Listen for signals before anything starts, so a stop request during start-up is not lost.
  const stopRequested = new Promise<string>((done) => {
    process.once('SIGINT', () => {
      done('SIGINT');
    });
    process.once('SIGTERM', () => {
      done('SIGTERM');
    });
  });
  const config = loadLakeConfig(env);
  const logger = createLogger({ level: config.AGENTRY_LOG_LEVEL, name: 'agentry-lake' });
  // Within the process runtime's 10 s before SIGKILL: queries still running are interrupted.
  const { startLakeServer } = await import('../lake/server.js');
  const running = await startLakeServer(config, { logger, closeGraceMs: 3000 });
  logger.info(
    {
      url: running.url,
      dataDir: config.AGENTRY_LAKE_DATA_DIR,
      memoryLimit: config.AGENTRY_LAKE_MEMORY_LIMIT,
      threads: config.AGENTRY_LAKE_THREADS,
      connectors: [...config.AGENTRY_LAKE_CONNECTORS],
      version: AGENTRY_VERSION,
    },
    'lake server is serving',
  );
  process.stdout.write(`agentry lake listening on ${running.url}\n`);

  const signal = await stopRequested;
  logger.info({ signal }, 'lake server is stopping');
  await running.stop();
  logger.info('lake server stopped');
  return 0;
}
