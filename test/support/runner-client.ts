import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parseDuration } from '../../platform/duration.js';
import { BUILTIN_EXECUTOR_DEFINITIONS } from '../../platform/executor-catalog.js';
import { isTerminalPromptStatus } from '../../platform/runner-protocol.js';
import type {
  DispatchPromptRequest,
  EventsPage,
  ExecutorInvocation,
  PromptState,
  TaskEvent,
} from '../../platform/runner-protocol.js';

/** The built-in `shell` executor as the operator would resolve it: bash runs the prompt as a script. */
export function shellInvocation(env: Record<string, string> = {}): ExecutorInvocation {
  const shell = BUILTIN_EXECUTOR_DEFINITIONS.find((d) => d.name === 'shell');
  if (shell === undefined) throw new Error('no built-in shell executor');
  return {
    name: shell.name,
    format: shell.format,
    command: shell.command,
    args: shell.args,
    promptVia: shell.promptVia,
    env,
    timeoutSeconds: Math.floor(parseDuration(shell.timeout) / 1000),
  };
}

/**
 * No such process, or only a zombie: an orphan's zombie waits for PID 1, which in a container may
 * never reap it, and a zombie runs nothing.
 */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true; // it ended between the two looks
  }
}

/** Polls a file until it has content (a prompt writes pids or markers there). */
export async function waitForFile(path: string, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await readFile(path, 'utf8').catch(() => '');
    if (text.trim() !== '') return text.trim();
    if (Date.now() > deadline) throw new Error(`${path} never appeared`);
    await sleep(50);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A small HTTP client of one runner, with its workload token. */
export class RunnerClient {
  constructor(
    readonly url: string,
    readonly token: string,
  ) {}

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { authorization: `Bearer ${this.token}`, ...extra };
  }

  dispatch(
    taskId: string,
    promptId: string,
    body: DispatchPromptRequest | Record<string, unknown>,
  ): Promise<Response> {
    return fetch(`${this.url}/v1/tasks/${taskId}/prompts/${promptId}`, {
      method: 'PUT',
      headers: this.headers({ 'content-type': 'application/json' }),
      body: JSON.stringify(body),
    });
  }

  /** Dispatches a shell prompt and expects 201. */
  async run(taskId: string, promptId: string, script: string, extra: Partial<DispatchPromptRequest> = {}) {
    const res = await this.dispatch(taskId, promptId, {
      text: script,
      executor: shellInvocation(),
      ...extra,
    });
    if (res.status !== 201) throw new Error(`dispatch answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as PromptState;
  }

  async prompt(taskId: string, promptId: string): Promise<PromptState | undefined> {
    const res = await fetch(`${this.url}/v1/tasks/${taskId}/prompts/${promptId}`, {
      headers: this.headers(),
    });
    if (res.status === 404) return undefined;
    if (res.status !== 200) throw new Error(`GET prompt answered ${res.status}`);
    return (await res.json()) as PromptState;
  }

  async cancel(taskId: string, promptId: string): Promise<Response> {
    return fetch(`${this.url}/v1/tasks/${taskId}/prompts/${promptId}/cancel`, {
      method: 'POST',
      headers: this.headers(),
    });
  }

  async events(taskId: string, query = ''): Promise<EventsPage> {
    const res = await fetch(`${this.url}/v1/tasks/${taskId}/events${query}`, { headers: this.headers() });
    if (res.status !== 200) throw new Error(`GET events answered ${res.status}`);
    return (await res.json()) as EventsPage;
  }

  /** Polls the task's events until `done` holds for them. */
  async waitForEvents(taskId: string, done: (events: TaskEvent[]) => boolean, timeoutMs = 45_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { events } = await this.events(taskId);
      if (done(events)) return events;
      if (Date.now() > deadline)
        throw new Error(`events of ${taskId} never matched: ${JSON.stringify(events)}`);
      await sleep(50);
    }
  }

  /** Polls until the prompt is terminal (generous: never a speed assertion). */
  async waitForTerminal(taskId: string, promptId: string, timeoutMs = 45_000): Promise<PromptState> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const state = await this.prompt(taskId, promptId);
      if (state !== undefined && isTerminalPromptStatus(state.status)) return state;
      if (Date.now() > deadline) throw new Error(`prompt ${promptId} not terminal: ${JSON.stringify(state)}`);
      await sleep(50);
    }
  }
}

export interface SseRead {
  status: number;
  headers: Headers;
  events: TaskEvent[];
  /** The `id:` of each event frame, as sent. */
  ids: string[];
  comments: string[];
}

/** Parses one SSE frame (lines up to a blank line) into the read so far. */
function parseFrame(frame: string, read: SseRead): void {
  let data: string | undefined;
  for (const line of frame.split('\n')) {
    if (line.startsWith(':')) read.comments.push(line.slice(1).trim());
    else if (line.startsWith('id: ')) read.ids.push(line.slice(4));
    else if (line.startsWith('data: ')) data = line.slice(6);
  }
  if (data !== undefined) read.events.push(JSON.parse(data) as TaskEvent);
}

/** Parses the complete frames of `buffer`; the rest, or undefined once `until` is satisfied. */
function takeFrames(buffer: string, read: SseRead, until: (read: SseRead) => boolean): string | undefined {
  let rest = buffer;
  let end = rest.indexOf('\n\n');
  while (end >= 0) {
    parseFrame(rest.slice(0, end), read);
    rest = rest.slice(end + 2);
    if (until(read)) return undefined;
    end = rest.indexOf('\n\n');
  }
  return rest;
}

/**
 * Opens GET events as SSE and reads frames until `until` is satisfied, then disconnects (the
 * stream never ends by itself). Parsed by hand, simply: frames end with a blank line.
 */
export async function readSse(
  client: RunnerClient,
  taskId: string,
  options: { query?: string; lastEventId?: number; until: (read: SseRead) => boolean; timeoutMs?: number },
): Promise<SseRead> {
  const abort = new AbortController();
  const timer = setTimeout(() => {
    abort.abort(new Error('SSE read timed out'));
  }, options.timeoutMs ?? 30_000);
  const headers = client.headers({ accept: 'text/event-stream' });
  if (options.lastEventId !== undefined) headers['last-event-id'] = String(options.lastEventId);
  try {
    const res = await fetch(`${client.url}/v1/tasks/${taskId}/events${options.query ?? ''}`, {
      headers,
      signal: abort.signal,
    });
    const read: SseRead = { status: res.status, headers: res.headers, events: [], ids: [], comments: [] };
    if (res.body === null || options.until(read)) return read;
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      const taken = takeFrames(buffer, read, options.until);
      if (taken === undefined) return read;
      buffer = taken;
    }
    return read;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}
