#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { ZodError } from 'zod';
import { ConfigError, loadConfig } from '../platform/config.js';

// Each command's module is loaded only when it runs: `agentry runner` starts in every new workspace
// and must not pay for the API server, the operator and the Kubernetes client (~0.6 s measured).

const USAGE = `usage: agentry <command>

commands:
  serve                     API server, operator and embedded store in one process (the default)
  api                       the REST API server alone (AGENTRY_STORE=kubernetes in a cluster)
  operator                  the operator alone: reconcilers, leader election, /metrics on AGENTRY_METRICS_PORT
  runner                    the agent runner inside a workspace (started by the operator)
  lake                      the context-lake server of an organization (started by the operator)
  keys create|list|revoke   manage API keys (embedded data directory, or a cluster with --kubeconfig)
  orgs create|list|get|set-limits|set-plan|delete
                            manage organizations (embedded data directory, or a cluster with --kubeconfig)
  webhook-keys show|rotate [--window 24h]
                            webhook signing keys (embedded data directory, or a cluster with --kubeconfig)
  crds [--write|--check]    print the CustomResourceDefinitions generated from the schemas

Configuration comes from environment variables; see docs/configuration.md.
`;

async function runServe(): Promise<number> {
  // Listen for signals before anything starts, so a stop request during start-up is not lost.
  const stopRequested = new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  const { serve } = await import('./serve.js');
  const running = await serve(loadConfig(), (line) => {
    process.stdout.write(`${line}\n`);
  });
  await stopRequested;
  await running.stop();
  return 0;
}

async function runCrds(args: string[]): Promise<number> {
  const { runCrdsCommand } = await import('./crds.js');
  const { values } = parseArgs({ args, options: { write: { type: 'boolean' }, check: { type: 'boolean' } } });
  return runCrdsCommand({ write: values.write === true, check: values.check === true });
}

/** Administration commands: each takes its arguments and the configuration. */
const ADMIN_COMMANDS: Readonly<Record<string, (args: string[]) => Promise<number>>> = {
  keys: async (args) => (await import('./keys.js')).runKeysCommand(args, loadConfig()),
  orgs: async (args) => (await import('./orgs.js')).runOrgsCommand(args, loadConfig()),
  'webhook-keys': async (args) =>
    (await import('./webhook-keys.js')).runWebhookKeysCommand(args, loadConfig()),
};

const adminCommand = (command: string | undefined): ((args: string[]) => Promise<number>) | undefined =>
  command !== undefined && Object.hasOwn(ADMIN_COMMANDS, command) ? ADMIN_COMMANDS[command] : undefined;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const admin = adminCommand(command);
  if (admin !== undefined) return admin(rest);
  switch (command) {
    case 'serve':
      return runServe();
    case 'operator':
      return (await import('./operator.js')).runOperatorCommand(loadConfig());
    case 'api':
      return (await import('./api.js')).runApiCommand(loadConfig());
    case 'runner':
      return (await import('./runner.js')).runRunnerCommand();
    case 'lake':
      return (await import('./lake.js')).runLakeCommand();
    case 'crds':
      return runCrds(rest);
    case undefined:
    case 'help':
    case '--help':
      process.stdout.write(USAGE);
      return 0;
    default:
      process.stderr.write(`agentry: unknown command "${command}"\n${USAGE}`);
      return 2;
  }
}

function describeFailure(err: unknown): string {
  if (err instanceof ConfigError) return err.message;
  if (err instanceof ZodError)
    return err.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('\n');
  return err instanceof Error ? err.message : String(err);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`agentry: ${describeFailure(err)}\n`);
    process.exitCode = 1;
  },
);
