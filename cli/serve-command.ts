import { parseArgs } from 'node:util';
import { ConfigSchema, loadConfig } from '../platform/config.js';
import type { CliCommand } from './command.js';
import { serve } from './serve.js';
import { settingsHelp } from './settings-help.js';

const USAGE = `usage: agentry serve

The embedded default: the REST API, the operator and a resource store in one process. Resources,
uploaded files and workspaces live in the data directory; each agent computer (workspace) runs as
a local \`agentry runner\` process. Prints the API key of organization "default" on first start.
Always one process (the store lives in it): AGENTRY_API_WORKERS is for \`agentry api\` only.

${settingsHelp(ConfigSchema, [
  ['AGENTRY_PORT', 'port of the API (0: any free port)'],
  ['AGENTRY_HOST', 'address the API listens on'],
  ['AGENTRY_PUBLIC_URL', 'base URL clients reach the API at (default http://HOST:PORT)'],
  ['AGENTRY_DATA_DIR', 'resources, files and workspaces; one server per directory'],
  ['AGENTRY_API_KEY', 'bootstrap key of org "default" instead of a generated one'],
  ['AGENTRY_LOG_LEVEL', 'fatal, error, warn, info, debug, trace or silent'],
  ['AGENTRY_PROCESS_ISOLATION', 'how runners and lakes are confined: bubblewrap or none'],
  ['AGENTRY_PROCESS_READ_ONLY_PATHS', 'extra directories confined processes may read, comma separated'],
  ['AGENTRY_EXECUTORS_FILE', 'executor definitions (YAML or JSON) added to the built-ins'],
  ['AGENTRY_SKILLS_FILE', 'the skills catalog (YAML or JSON)'],
  ['AGENTRY_OBJECT_STORE', 'where uploaded files live: filesystem (the data directory) or s3'],
  ['AGENTRY_WEBHOOK_PRIVATE_TARGETS', 'whether webhooks may target local addresses (default true here)'],
  ['AGENTRY_LAKE_FILE_ROOTS', 'directories file:// lake datasets may read, comma separated'],
  ['AGENTRY_UI_SESSION_TTL', 'how long a web-page sign-in lasts (a duration)'],
  ['AGENTRY_PREVIEW_DOMAIN', 'preview URLs at https://<token>.<domain>/ (wildcard DNS and TLS)'],
])}  More settings (S3, SQS, limits): docs/configuration.md#settings.

example:
  AGENTRY_PORT=9090 AGENTRY_DATA_DIR=$HOME/.agentry agentry serve
`;

/** `agentry serve`: runs until SIGINT or SIGTERM, then stops its runners and exits 0. */
export const serveCommand: CliCommand = {
  usage: () => USAGE,
  async run(args) {
    parseArgs({ args, options: {} });
    // Listen for signals before anything starts, so a stop request during start-up is not lost.
    const stopRequested = new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    const running = await serve(loadConfig(), (line) => {
      process.stdout.write(`${line}\n`);
    });
    await stopRequested;
    await running.stop();
    return 0;
  },
};
