import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAgentry } from '../support/spawn-cli.js';

// `agentry … --help` must start nothing: every listener's port points at one this test holds (a
// bind would fail), and HOME and every data directory point into an empty directory that must
// stay empty.

let held: Server;
let heldPort: number;
let home: string;

beforeAll(async () => {
  held = createServer();
  await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
  const address = held.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  heldPort = address.port;
  home = await mkdtemp(join(tmpdir(), 'agentry-cli-help-'));
});

afterAll(async () => {
  await new Promise<void>((resolve) =>
    held.close(() => {
      resolve();
    }),
  );
  await rm(home, { recursive: true, force: true });
});

/** Every setting that chooses a port or a directory, aimed at the held port and into `dir`. */
const environment = (dir = home): Record<string, string> => ({
  HOME: dir,
  // The test's TypeScript loader (swc) keeps its native cache there, not in HOME.
  XDG_CACHE_HOME: process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'),
  AGENTRY_HOST: '127.0.0.1',
  AGENTRY_PORT: String(heldPort),
  AGENTRY_METRICS_PORT: String(heldPort),
  AGENTRY_DATA_DIR: join(dir, 'data'),
  AGENTRY_LEADER_ELECTION: 'false',
  AGENTRY_LOG_LEVEL: 'warn',
  AGENTRY_RUNNER_TOKEN: 'x'.repeat(40),
  AGENTRY_RUNNER_HOST: '127.0.0.1',
  AGENTRY_RUNNER_PORT: String(heldPort),
  AGENTRY_RUNNER_WORKDIR: join(dir, 'code'),
  AGENTRY_RUNNER_STATE_DIR: join(dir, 'runner-state'),
  AGENTRY_LAKE_TOKEN: 'x'.repeat(40),
  AGENTRY_LAKE_HOST: '127.0.0.1',
  AGENTRY_LAKE_PORT: String(heldPort),
  AGENTRY_LAKE_DATA_DIR: join(dir, 'lake'),
});

const HELP_REQUESTS: ReadonlyArray<[string[], string]> = [
  [[], 'usage: agentry <command>'],
  [['help'], 'usage: agentry <command>'],
  [['--help'], 'usage: agentry <command>'],
  [['-h'], 'usage: agentry <command>'],
  [['serve', '--help'], 'usage: agentry serve'],
  [['help', 'serve'], 'usage: agentry serve'],
  [['api', '--help'], 'usage: agentry api'],
  [['operator', '-h'], 'usage: agentry operator'],
  [['runner', '--help'], 'usage: agentry runner'],
  [['lake', '--help'], 'usage: agentry lake'],
  [['lake', 'query', '--help'], 'usage: agentry lake tables [--json]'],
  [['crds', '--help'], 'usage: agentry crds'],
  [['keys', '--help'], 'agentry keys create'],
  [['keys', 'create', '--help'], 'agentry keys create'],
  [['orgs', '--help'], 'agentry orgs create|list'],
  [['orgs', 'set-limits', '--help'], 'usage: agentry orgs set-limits'],
  [['webhook-keys', 'rotate', '-h'], 'agentry webhook-keys rotate'],
];

describe('agentry --help', () => {
  it.each(HELP_REQUESTS)(
    'agentry %j prints its usage and starts nothing',
    async (args, usage) => {
      const result = await runAgentry(args, environment());
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toContain(usage);
      expect(await readdir(home)).toEqual([]);
    },
    30_000,
  );

  it('names each setting a server reads, with its default from the schema', async () => {
    const result = await runAgentry(['serve', '--help'], environment());
    expect(result.stdout).toMatch(/AGENTRY_PORT +port of the API.*\(default 8080\)/);
    expect(result.stdout).toMatch(/example:\n +.*agentry serve/);
  }, 30_000);

  it('answers even when a setting is invalid, since it reads none', async () => {
    const result = await runAgentry(['api', '--help'], { ...environment(), AGENTRY_PORT: 'eighty' });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('usage: agentry api');
  }, 30_000);
});

describe('agentry with bad arguments', () => {
  it.each([
    [['frobnicate'], 'agentry: unknown command "frobnicate" (see agentry --help)'],
    [['--verbose'], 'agentry: unknown option "--verbose" (see agentry --help)'],
    [['serve', '--port', '9090'], "agentry serve: unknown option '--port' (see agentry serve --help)"],
    [['runner', 'now'], "agentry runner: unexpected argument 'now' (see agentry runner --help)"],
    [['keys', 'frob'], 'agentry keys: unknown action "frob" (see agentry keys --help)'],
    [['orgs', 'create'], 'agentry orgs: missing NAME (see agentry orgs --help)'],
    [['lake', 'schema'], 'agentry lake: schema takes one argument: the table (see agentry lake --help)'],
    [
      ['lake', 'query', 'SELECT 1', '--max-rows', '0'],
      'agentry lake: --max-rows must be a whole number from 1 (see agentry lake --help)',
    ],
  ])(
    'agentry %j is refused in one line with a hint, exit 2, starting nothing',
    async (args, line) => {
      const result = await runAgentry(args, environment());
      expect(result).toMatchObject({ code: 2, stdout: '', stderr: `${line}\n` });
      expect(await readdir(home)).toEqual([]);
    },
    30_000,
  );
});

describe('a port in use', () => {
  it.each([
    ['serve', 'AGENTRY_PORT'],
    ['api', 'AGENTRY_PORT'],
    ['operator', 'AGENTRY_METRICS_PORT'],
    ['runner', 'AGENTRY_RUNNER_PORT'],
    ['lake', 'AGENTRY_LAKE_PORT'],
  ])(
    'stops agentry %s with one line naming %s',
    async (command, setting) => {
      const dir = await mkdtemp(join(tmpdir(), 'agentry-cli-port-'));
      try {
        const result = await runAgentry([command], environment(dir));
        expect(result.code).toBe(1);
        expect(result.stderr).toBe(
          `agentry ${command}: port ${heldPort} is in use (127.0.0.1:${heldPort}); set ${setting} to another port\n`,
        );
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    60_000,
  );
});

describe('an unusable data directory', () => {
  it('stops agentry serve with one line naming AGENTRY_DATA_DIR', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentry-cli-datadir-'));
    try {
      const file = join(dir, 'not-a-directory');
      await writeFile(file, '');
      const result = await runAgentry(['serve'], {
        ...environment(dir),
        AGENTRY_DATA_DIR: file,
        AGENTRY_PORT: '0',
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `agentry serve: cannot write the data directory ${file} (a file is in the way); set AGENTRY_DATA_DIR to a writable directory\n`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
