import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { AgentComputerType } from '../../../crds/index.js';
import { BUILTIN_EXECUTOR_DEFINITIONS } from '../../../platform/executor-catalog.js';
import { parseDuration } from '../../../platform/duration.js';
import { createLogger } from '../../../platform/log.js';
import { RunnerClient } from '../../../platform/runner-client.js';
import { TaskEventSchema } from '../../../platform/runner-protocol.js';
import type { ExecutorInvocation, PromptState, TaskEvent } from '../../../platform/runner-protocol.js';
import { createRunnerApp, listenRunner } from '../../../runner/server.js';
import type { RunnerApp, RunningRunner } from '../../../runner/server.js';
import { RunnerState } from '../../../runner/state.js';
import { eventually } from '../../support/api-server.js';
import { readyStatus } from '../../support/ready-status.js';
import type { TestApi } from '../../support/api-server.js';

/** Test helpers for the event endpoints: a real runner per workspace, and a plain SSE reader. */

export interface Frame {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

/** One SSE frame, parsed the simple way (our frames never span data lines). */
function parseFrame(block: string): Frame {
  const frame: Frame = {};
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) {
      frame.comment = line.slice(1).trim();
      continue;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id' || field === 'event' || field === 'data') frame[field] = value;
  }
  return frame;
}

export const DoneSchema = z.strictObject({
  status: z.string(),
  lastSeq: z.number(),
  finalResult: z.string().nullable(),
});

/** An open event stream: frames arrive in `frames` as they come; `ended` once the server closed it. */
export class SseStream {
  readonly frames: Frame[] = [];
  ended = false;
  private readonly pumping: Promise<void>;

  constructor(
    readonly response: Response,
    private readonly controller: AbortController,
  ) {
    this.pumping = this.pump();
  }

  static async open(url: string, headers: Record<string, string>): Promise<SseStream> {
    const controller = new AbortController();
    const response = await fetch(url, { headers, signal: controller.signal });
    return new SseStream(response, controller);
  }

  events(): TaskEvent[] {
    return this.frames
      .filter((f) => f.event === 'event')
      .map((f) => TaskEventSchema.parse(JSON.parse(f.data ?? '')));
  }

  done(): z.infer<typeof DoneSchema> | undefined {
    const frame = this.frames.find((f) => f.event === 'done');
    return frame === undefined ? undefined : DoneSchema.parse(JSON.parse(frame.data ?? ''));
  }

  async close(): Promise<void> {
    this.controller.abort();
    await this.pumping;
  }

  /** Resolves once the server ended the stream. */
  async finished(timeoutMs = 15_000): Promise<void> {
    await eventually(() => this.ended, timeoutMs);
  }

  private async pump(): Promise<void> {
    const body = this.response.body;
    if (body === null) {
      this.ended = true;
      return;
    }
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of body as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          this.frames.push(parseFrame(buffer.slice(0, end)));
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf('\n\n');
        }
      }
    } catch {
      // aborted by close()
    }
    this.ended = true;
  }
}

/** The built-in shell executor as the operator resolves it from the catalog. */
export function shellInvocation(): ExecutorInvocation {
  const shell = BUILTIN_EXECUTOR_DEFINITIONS.find((definition) => definition.name === 'shell');
  if (shell === undefined) throw new Error('no built-in shell executor');
  return {
    name: shell.name,
    format: shell.format,
    command: shell.command,
    args: shell.args,
    promptVia: shell.promptVia,
    env: {},
    timeoutSeconds: Math.ceil(parseDuration(shell.timeout) / 1000),
  };
}

export interface WorkspaceRunner {
  app: RunnerApp;
  http: RunningRunner;
  /** The operator's client of this runner (same token the API derives). */
  client: RunnerClient;
  stop(): Promise<void>;
}

/**
 * A real runner for one workspace, with the token the installation key derives for it, and the
 * workspace's status made Ready with its endpoint, as the operator would once the runner answers.
 */
export async function startWorkspaceRunner(
  api: TestApi,
  namespace: string,
  workspaceId: string,
): Promise<WorkspaceRunner> {
  const ac = await api.store.get(AgentComputerType, namespace, workspaceId);
  if (ac === undefined) throw new Error(`workspace ${workspaceId} is missing`);
  const token = api.installationKey.runnerToken(ac);
  const root = await mkdtemp(join(tmpdir(), 'agentry-api-runner-'));
  await mkdir(join(root, 'code'));
  await mkdir(join(root, 'state'));
  const app = createRunnerApp({
    token,
    logger: createLogger({ level: 'silent' }),
    state: new RunnerState(),
    version: 'test',
    workdir: join(root, 'code'),
    stateDir: join(root, 'state'),
    keepaliveMs: 200,
  });
  await app.start();
  const http = await listenRunner(app.app, { host: '127.0.0.1', port: 0, closeGraceMs: 200 });
  await markReady(api, namespace, workspaceId, http.url);
  return {
    app,
    http,
    client: new RunnerClient({ endpoint: http.url, token }),
    async stop() {
      await app.shutdown();
      await http.stop();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Writes the workspace's status as the operator does once its runner is healthy, and waits for the API to see it. */
export async function markReady(
  api: TestApi,
  namespace: string,
  workspaceId: string,
  endpoint: string,
): Promise<void> {
  const ac = await api.store.get(AgentComputerType, namespace, workspaceId);
  if (ac === undefined) throw new Error(`workspace ${workspaceId} is missing`);
  const written = await api.store.replaceStatus(AgentComputerType, {
    ...ac,
    status: readyStatus(ac, endpoint),
  });
  await eventually(
    () =>
      api.readModel.agentComputers.get(namespace, workspaceId)?.metadata.resourceVersion ===
      written.metadata.resourceVersion,
  );
}

/** Dispatches a shell prompt as the operator does, and waits until the runner finished it. */
export async function runToEnd(
  runner: WorkspaceRunner,
  taskId: string,
  promptId: string,
  script: string,
): Promise<PromptState> {
  await runner.client.dispatchPrompt(taskId, promptId, { text: script, executor: shellInvocation() });
  return waitForEnd(runner, taskId, promptId);
}

export async function waitForEnd(
  runner: WorkspaceRunner,
  taskId: string,
  promptId: string,
): Promise<PromptState> {
  let state: PromptState | undefined;
  await eventually(async () => {
    state = await runner.client.getPrompt(taskId, promptId);
    return state !== undefined && ['succeeded', 'failed', 'canceled'].includes(state.status);
  }, 30_000).catch((err: unknown) => {
    throw new Error(`the prompt did not end: ${JSON.stringify(state)}`, { cause: err });
  });
  if (state === undefined) throw new Error('no prompt state');
  return state;
}
