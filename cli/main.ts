#!/usr/bin/env node
import { ZodError } from 'zod';
import { ConfigError } from '../platform/config.js';
import { ListenError } from '../platform/listen.js';
import type { CliCommand } from './command.js';
import { UsageError, actionOf, parseArgsProblem, wantsHelp } from './command.js';

// Each command's module is loaded only when it runs: `agentry runner` starts in every new workspace
// and must not pay for the API server, the operator and the Kubernetes client (~0.6 s measured).

interface CommandEntry {
  /** The line of `agentry --help` (the synopsis's arguments, then what it is). */
  summary: string;
  load(): Promise<CliCommand>;
}

const COMMANDS: Readonly<Record<string, CommandEntry>> = {
  serve: {
    summary: 'serve                     API server, operator and embedded store in one process (the default)',
    load: async () => (await import('./serve-command.js')).serveCommand,
  },
  api: {
    summary: 'api                       the REST API server alone (AGENTRY_STORE=kubernetes in a cluster)',
    load: async () => (await import('./api.js')).apiCommand,
  },
  operator: {
    summary:
      'operator                  the operator alone: reconcilers, leader election, /metrics and health',
    load: async () => (await import('./operator.js')).operatorCommand,
  },
  runner: {
    summary: 'runner                    the agent runner inside a workspace (started by the operator)',
    load: async () => (await import('./runner.js')).runnerCommand,
  },
  lake: {
    summary: 'lake                      the context-lake server of an organization (started by the operator)',
    load: async () => (await import('./lake.js')).lakeCommand,
  },
  'egress-proxy': {
    summary: 'egress-proxy              the egress proxy of workspaces: allowed hosts only, per prompt token',
    load: async () => (await import('./egress-proxy.js')).egressProxyCommand,
  },
  keys: {
    summary: 'keys create|list|revoke   manage API keys',
    load: async () => (await import('./keys.js')).keysCommand,
  },
  orgs: {
    summary:
      'orgs create|list|get|set-limits|set-plan|delete\n                            manage organizations',
    load: async () => (await import('./orgs.js')).orgsCommand,
  },
  'webhook-keys': {
    summary: 'webhook-keys show|rotate  webhook signing keys',
    load: async () => (await import('./webhook-keys.js')).webhookKeysCommand,
  },
  crds: {
    summary: 'crds [--write|--check]    print the CustomResourceDefinitions generated from the schemas',
    load: async () => (await import('./crds.js')).crdsCommand,
  },
};

const USAGE = `usage: agentry <command> [arguments]
       agentry <command> --help      what a command does, its options and settings

commands:
${Object.values(COMMANDS)
  .map((entry) => `  ${entry.summary}`)
  .join('\n')}
  help [command]            this text, or a command's

keys, orgs and webhook-keys work on the embedded data directory (AGENTRY_DATA_DIR), or on a
cluster with --kubeconfig PATH. Configuration comes from environment variables (each command's
--help names those it reads).

example:
  agentry serve --help
`;

const entryOf = (name: string): CommandEntry | undefined =>
  Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;

function unknownCommand(name: string): number {
  const what = name.startsWith('-') ? 'option' : 'command';
  process.stderr.write(`agentry: unknown ${what} "${name}" (see agentry --help)\n`);
  return 2;
}

/** `agentry help [command]`: the overview, or a command's help. */
async function help(args: string[]): Promise<number> {
  const [name] = args;
  if (name === undefined) {
    process.stdout.write(USAGE);
    return 0;
  }
  const entry = entryOf(name);
  if (entry === undefined) return unknownCommand(name);
  process.stdout.write((await entry.load()).usage(actionOf(args.slice(1))));
  return 0;
}

async function main(name: string | undefined, args: string[]): Promise<number> {
  if (name === undefined || name === '--help' || name === '-h') return help([]);
  if (name === 'help') return help(args);
  const entry = entryOf(name);
  if (entry === undefined) return unknownCommand(name);
  const command = await entry.load();
  if (wantsHelp(args)) {
    process.stdout.write(command.usage(actionOf(args)));
    return 0;
  }
  return command.run(args);
}

/** A failure as one line for the terminal, and the exit code: 2 for bad arguments, 1 otherwise. */
function describeFailure(err: unknown): { message: string; usage: boolean } {
  const problem = parseArgsProblem(err);
  if (problem !== undefined) return { message: problem, usage: true };
  if (err instanceof UsageError) return { message: err.message, usage: true };
  if (err instanceof ConfigError || err instanceof ListenError) return { message: err.message, usage: false };
  if (err instanceof ZodError) {
    const problems = err.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    return { message: problems.join('; '), usage: false };
  }
  return { message: err instanceof Error ? err.message : String(err), usage: false };
}

const [name, ...args] = process.argv.slice(2);
main(name, args).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const { message, usage } = describeFailure(err);
    const prefix = `agentry ${name ?? ''}`.trim();
    process.stderr.write(`${prefix}: ${message}${usage ? ` (see ${prefix} --help)` : ''}\n`);
    process.exitCode = usage ? 2 : 1;
  },
);
