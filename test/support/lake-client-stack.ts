import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { startServeProcess, stopChild } from './spawn-cli.js';

/**
 * `agentry serve` as a child process whose organization `default` has a context lake with one
 * file dataset, `sales` (city, sales): what the lake client's tests query from a workspace.
 */
export interface LakeClientStack {
  url: string;
  apiKey: string;
  /** Headers of the organization's API key, for JSON calls. */
  headers: Record<string, string>;
  /** Starts a `shell` task with this prompt (or a task of another executor); its id. */
  startShellTask(prompt: string, executor?: string): Promise<string>;
  stop(): Promise<void>;
}

const API_KEY = 'lake-client-test-key-0123456789abcdef';

/** A `shell`-like executor that reads AGENTS.md, as Codex does: its prompts see the instructions Agentry writes. */
export const AGENTS_MD_EXECUTOR = 'agentsmd';
const EXECUTORS = {
  executors: [
    {
      name: AGENTS_MD_EXECUTOR,
      format: 'lines',
      command: 'bash',
      args: ['{promptFile}'],
      promptVia: 'file',
      instructionsFile: 'AGENTS.md',
    },
  ],
};

export async function startLakeClientStack(): Promise<LakeClientStack> {
  const root = await mkdtemp(join(tmpdir(), 'agentry-lake-client-'));
  const dataDir = join(root, 'data');
  const files = join(dataDir, 'lake-files', 'agentry-org-default');
  await mkdir(files, { recursive: true });
  await writeFile(join(files, 'sales.csv'), 'city,sales\nOslo,12\nLima,30\nOslo,5\n');
  const executorsFile = join(root, 'executors.json');
  await writeFile(executorsFile, JSON.stringify(EXECUTORS));
  let child: ChildProcessWithoutNullStreams | undefined;
  const stop = async (): Promise<void> => {
    if (child !== undefined) await stopChild(child);
    await rm(root, { recursive: true, force: true });
  };
  try {
    const started = await startServeProcess({
      AGENTRY_DATA_DIR: dataDir,
      AGENTRY_API_KEY: API_KEY,
      AGENTRY_EXECUTORS_FILE: executorsFile,
    });
    child = started.child;
    const headers = { 'api-key': API_KEY, 'content-type': 'application/json' };
    const dataset = {
      name: 'sales',
      from: `file://${join(files, 'sales.csv')}`,
      params: { file_format: 'csv' },
    };
    const added = await fetch(`${started.url}/v1/context-lake/datasets`, {
      method: 'POST',
      headers,
      body: JSON.stringify(dataset),
    });
    if (added.status !== 201)
      throw new Error(`adding the dataset answered ${added.status}: ${await added.text()}`);
    const startShellTask = async (prompt: string, executor = 'shell'): Promise<string> => {
      const res = await fetch(`${started.url}/v1/tasks`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ executor, prompt }),
      });
      if (res.status !== 201)
        throw new Error(`creating the task answered ${res.status}: ${await res.text()}`);
      return z.object({ id: z.string() }).parse(await res.json()).id;
    };
    return { url: started.url, apiKey: API_KEY, headers, startShellTask, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The stdout lines of a task's `shell` prompt (the `lines` format's text events). */
export const textLines = (events: readonly { payload: unknown }[]): string[] =>
  events.flatMap((event) => {
    const text = z.object({ content: z.string() }).safeParse(event.payload);
    return text.success ? [text.data.content] : [];
  });

/** The lines that start with `MARK `, without it: how a test prompt labels what it prints. */
export const markedLines = (lines: readonly string[], mark: string): string[] =>
  lines.filter((line) => line.startsWith(`${mark} `)).map((line) => line.slice(mark.length + 1));
