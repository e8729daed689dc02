// Secretless workspaces on the embedded default (docs/adr/0009): `agentry serve` as a real child
// process runs a prompt with an executor that has a model route for anthropic; its script dumps
// everything a prompt can read about its environment. The organization's provider key must
// appear nowhere in the workspace; with AGENTRY_MODEL_GATEWAY=disabled it is in the environment.
import { afterEach, describe, expect, it } from '@jest/globals';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { SecretType, secretData } from '../../crds/index.js';
import { workspacePaths } from '../../operator/runtimes/process/workspace.js';
import { embeddedStoreDir } from '../../platform/store/open.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { startServeProcess, stopChild } from '../support/spawn-cli.js';
import { until } from '../support/until.js';
import { routedShellExecutor } from '../support/routed-shell-executor.js';

// Made at run time: the repository (this file) is readable inside the workspace.
const FAKE_KEY = `sk-ant-fake-${randomBytes(16).toString('hex')}`;
const API_KEY = 'key-absence-test-key-0123456789abcdef';
const NAMESPACE = 'agentry-org-default';

/** Everything a prompt can read about its environment, written to /code/probe. */
const PROBE_SCRIPT = [
  'mkdir -p probe',
  'env > probe/env.txt',
  "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < \"$f\" 2>/dev/null; done > probe/environ.txt",
  'ps eww -A > probe/ps.txt 2>&1 || true',
  // This run's key, put together at run time: the script's own text holds only its two halves
  // (a pattern such as Anthropic's key shape would also match fake keys in any checkout under /tmp).
  `needle="${FAKE_KEY.slice(0, 20)}""${FAKE_KEY.slice(20)}"`,
  'grep -r --binary-files=text -l -F "$needle" /code "$HOME" /tmp 2>/dev/null > probe/grep.txt || true',
  'echo probed',
].join('\n');

const EXECUTORS = { executors: [routedShellExecutor('keyprobe')] };

const children: ChildProcessWithoutNullStreams[] = [];
const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(children.splice(0).map(stopChild));
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A data directory whose store already holds the organization's Secret with the fake key. */
async function seededDataDir(): Promise<{ dataDir: string; executorsFile: string }> {
  const root = await mkdtemp(join(tmpdir(), 'agentry-key-absence-'));
  dirs.push(root);
  const dataDir = join(root, 'data');
  const store = await EmbeddedStore.open(embeddedStoreDir(dataDir));
  await store.create(SecretType, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'agentry-executor-claude', namespace: NAMESPACE },
    type: 'Opaque',
    data: secretData({ ANTHROPIC_API_KEY: FAKE_KEY }),
  });
  await store.close();
  const executorsFile = join(root, 'executors.json');
  await writeFile(executorsFile, JSON.stringify(EXECUTORS));
  return { dataDir, executorsFile };
}

const CreatedSchema = z.object({ id: z.string(), workspaceId: z.string() });
const TaskSchema = z.object({
  status: z.string(),
  prompts: z.array(z.object({ error: z.string().nullable() })),
});

/** Runs the probe on a fresh `agentry serve`; answers its URL, the workspace's files and the server's output. */
async function probe(env: Record<string, string>) {
  const { dataDir, executorsFile } = await seededDataDir();
  const { url, child } = await startServeProcess({
    AGENTRY_DATA_DIR: dataDir,
    AGENTRY_EXECUTORS_FILE: executorsFile,
    AGENTRY_API_KEY: API_KEY,
    ...env,
  });
  children.push(child);
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const headers = { API_KEY, 'content-type': 'application/json' };
  const res = await fetch(`${url}/v1/tasks`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ executor: 'keyprobe', prompt: PROBE_SCRIPT }),
  });
  expect(res.status).toBe(201);
  const created = CreatedSchema.parse(await res.json());
  const task = await until(
    'the probe to end',
    async () => {
      const read = TaskSchema.parse(await (await fetch(`${url}/v1/tasks/${created.id}`, { headers })).json());
      return read.status === 'running' ? undefined : read;
    },
    90_000,
  );
  expect(task).toMatchObject({ status: 'completed' });
  const events = await (await fetch(`${url}/v1/tasks/${created.id}/events?all=true`, { headers })).text();
  const code = workspacePaths(dataDir, NAMESPACE, created.workspaceId).code;
  const read = (name: string) => readFile(join(code, 'probe', name), 'utf8');
  return { url, dataDir, code, events, output: () => output, read };
}

/** Every file below `dir` (but the store, where the Secret lives) that holds `needle`. */
async function filesHolding(dir: string, needle: string, skip: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    if (path.startsWith(skip)) continue;
    const text = await readFile(path).catch(() => Buffer.alloc(0));
    if (text.includes(needle)) found.push(path);
  }
  return found;
}

describe('the model gateway on the embedded default', () => {
  it("keeps the organization's key out of the workspace: env, /proc, ps, files, event log and artifacts", async () => {
    const run = await probe({});
    const env = await run.read('env.txt');
    expect(env).toMatch(/^ANTHROPIC_API_KEY=agp1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/m);
    expect(env).toContain(`ANTHROPIC_BASE_URL=${run.url}/model-gateway/anthropic\n`);
    // The dumps are real: they show the token the executor holds.
    expect(await run.read('environ.txt')).toMatch(/ANTHROPIC_API_KEY=agp1\./);
    expect(await run.read('ps.txt')).not.toBe('');
    expect(await run.read('grep.txt')).toBe('');
    const base64Key = Buffer.from(FAKE_KEY).toString('base64');
    for (const needle of [FAKE_KEY, base64Key]) {
      expect(await filesHolding(run.dataDir, needle, embeddedStoreDir(run.dataDir))).toEqual([]);
      expect(run.events).not.toContain(needle);
      expect(run.output()).not.toContain(needle);
    }
  }, 180_000);

  it('puts the key into the environment when AGENTRY_MODEL_GATEWAY is disabled (the switch works)', async () => {
    const run = await probe({ AGENTRY_MODEL_GATEWAY: 'disabled' });
    const env = await run.read('env.txt');
    expect(env).toContain(`ANTHROPIC_API_KEY=${FAKE_KEY}\n`);
    expect(env).not.toContain('ANTHROPIC_BASE_URL=');
  }, 180_000);
});
