#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { runCrdsCommand } from './crds.js';

const USAGE = `usage: agentry <command>

commands:
  serve                     API server, operator and embedded store in one process (the default)
  keys create|list|revoke   manage API keys (embedded data directory, or the cluster with --kubeconfig)
  crds [--write|--check]    print the CustomResourceDefinitions generated from the schemas
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'crds': {
      const { values } = parseArgs({ args: rest, options: { write: { type: 'boolean' }, check: { type: 'boolean' } } });
      return runCrdsCommand({ write: values.write === true, check: values.check === true });
    }
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

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  },
);
