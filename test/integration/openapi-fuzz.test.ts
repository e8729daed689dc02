// The OpenAPI document against the server it describes: schemathesis (PyPI, pinned) generates
// requests for every operation of /v1/openapi.json of a real `agentry serve` with a real key and
// runs all its checks — no 5xx, every response in its documented status, media type, headers and
// schema, schema-valid requests accepted and invalid ones refused, 405 with Allow for undocumented
// methods. Bounded: fixed seed, few examples per operation. Rules a JSON Schema cannot state are
// listed per operation in fixtures/openapi-fuzz/schemathesis.toml.
//
// The server runs in its own network namespace with only loopback (`unshare --net`), and
// schemathesis joins it (`nsenter`): the fuzzer invents webhook targets, repository URLs and dataset
// locations, and none of them may reach beyond this machine. Its executors only echo prompts back
// (fixtures/openapi-fuzz/executors.yaml), so no invented text runs as a script. Needs root (for the
// namespace) and python3 with venv.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { execFile, spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pypiTool } from '../support/pypi-tool.js';
import { stopChild, waitForOutput } from '../support/spawn-cli.js';

/** Verified with `pip index versions schemathesis` (4.32.5 was the newest). */
const SCHEMATHESIS_VERSION = '4.32.5';
const KEY = 'agk_openapi_fuzz_key_0123456789';
const FIXTURES = resolve('test/integration/fixtures/openapi-fuzz');
const SERVING = /serving at (http:\/\/[0-9.:]+)\/v1/;

let dir: string;
let serve: ChildProcessWithoutNullStreams;
let url: string;

/** Runs a command inside the server's network namespace; resolves with its exit code and output. */
function inServerNetwork(
  command: string,
  args: string[],
  timeoutMs: number,
): Promise<{ code: number | null; output: string }> {
  const pid = serve.pid;
  if (pid === undefined) throw new Error('the server has no pid');
  return new Promise((resolveRun) => {
    execFile(
      'nsenter',
      [`--net=/proc/${pid}/ns/net`, '--', command, ...args],
      // In the temporary directory: schemathesis leaves a `.schemathesis` folder where it runs.
      { cwd: dir, timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
        resolveRun({ code, output: `${stdout}${stderr}` });
      },
    );
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-openapi-fuzz-'));
  serve = spawn(
    'unshare',
    [
      '--net',
      '--',
      'sh',
      '-c',
      'ip link set lo up && exec "$@"',
      'sh',
      process.execPath,
      '--import',
      './test/support/register-swc.mjs',
      'cli/main.ts',
      'serve',
    ],
    {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        AGENTRY_PORT: '0',
        AGENTRY_LOG_LEVEL: 'warn',
        AGENTRY_DATA_DIR: dir,
        AGENTRY_API_KEY: KEY,
        AGENTRY_EXECUTORS_FILE: join(FIXTURES, 'executors.yaml'),
        // The fuzzer stops and redeploys the lake too: a query waits for its start at most this long (then 504).
        AGENTRY_LAKE_SQL_TIMEOUT: '30s',
      },
      stdio: 'pipe',
    },
  );
  const out = await waitForOutput(serve, SERVING, 60_000);
  url = SERVING.exec(out)?.[1] ?? '';
}, 120_000);

afterAll(async () => {
  await stopChild(serve);
  await rm(dir, { recursive: true, force: true });
}, 60_000);

it('finds no server error and no disagreement with the document in any operation', async () => {
  const st = await pypiTool('schemathesis', SCHEMATHESIS_VERSION, 'st');
  // The context lake starts on its first query: started here, its cold start is no request's timeout.
  const warm = await inServerNetwork(
    'curl',
    ['-s', '-m', '170', '-X', 'POST', `${url}/v1/context-lake/sql`, '-H', `API_KEY: ${KEY}`].concat([
      '-H',
      'content-type: application/json',
      '-d',
      '{"query":"SELECT 1 AS one"}',
    ]),
    180_000,
  );
  expect(warm.output).toContain('"rowCount":1');
  const run = await inServerNetwork(
    st,
    [
      '--config-file',
      join(FIXTURES, 'schemathesis.toml'),
      'run',
      `${url}/v1/openapi.json`,
      '--header',
      `API_KEY: ${KEY}`,
      '--checks',
      'all',
      '--phases',
      'examples,coverage,fuzzing',
      '--seed',
      '20261125',
      '--max-examples',
      '5',
      // One at a time: run concurrently, a fuzzed /stop lands while a query waits for the lake to
      // start, and the query's 504 at its deadline is right but reads as a server error.
      '--workers',
      '1',
      '--request-timeout',
      '60',
      // Generous (a lake's cold start on a loaded machine), never a speed assertion.
      '--max-response-time',
      '60',
      '--generation-database',
      'none',
      '--no-color',
    ],
    170_000,
  );
  // On failure the report is the message: each failing operation with a curl line to reproduce it.
  expect({ code: run.code, report: run.code === 0 ? '' : run.output }).toEqual({ code: 0, report: '' });
}, 360_000);
