import { loadLakeConfig } from '../lake/config.js';
import { startLakeServer } from '../lake/server.js';
import { createLogger } from '../platform/log.js';
import { AGENTRY_VERSION } from '../platform/version.js';

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
