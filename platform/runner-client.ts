import { parseJson } from './json.js';
import { Readable } from 'node:stream';
import { EventFrameReader, MalformedEventError } from './runner-event-frames.js';
import type { EventFrame } from './runner-event-frames.js';
import { z } from 'zod';
import {
  ArtifactFileSchema,
  ArtifactManifestSchema,
  EventsPageSchema,
  ListeningPortsSchema,
  PromptStateSchema,
} from './runner-protocol.js';
import type {
  ArtifactBase,
  ArtifactFile,
  ArtifactManifest,
  DispatchPromptRequest,
  EventsPage,
  PromptState,
  TaskEvent,
} from './runner-protocol.js';

/** A runner answered with an error status, or could not be reached (`status` undefined). */
export class RunnerRequestError extends Error {
  override name = 'RunnerRequestError';

  constructor(
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** The runner is down or unreachable: worth retrying once the workspace is up again. */
  get unreachable(): boolean {
    return this.status === undefined || this.status === 502 || this.status === 503;
  }
}

export interface RunnerClientOptions {
  /** `http://host:port` of the runner (AgentComputer status.endpoint). */
  endpoint: string;
  token: string;
  /** For short calls (not streams). Default 10 s. */
  timeoutMs?: number;
}

export interface EventStreamOptions {
  /** Events with a seq above this. */
  after?: number;
  promptId?: string;
  signal: AbortSignal;
}

const DISPATCH_TIMEOUT_MS = 30_000;
/** Listing hashes new and changed files: a few gigabytes take a while on a slow disk. */
const ARTIFACT_TIMEOUT_MS = 300_000;

/**
 * Whether a request that failed before any answer may be sent again: not once it was aborted or timed
 * out, not with a streamed body (already consumed), and only for methods whose repetition is harmless
 * (the runner's PUTs are idempotent by id; a POST such as a cancel is not sent twice).
 */
function mayResend(init: RequestInit): boolean {
  const method = init.method ?? 'GET';
  const body = init.body ?? undefined;
  return (
    init.signal?.aborted !== true &&
    (body === undefined || typeof body === 'string') &&
    ['GET', 'HEAD', 'PUT', 'DELETE'].includes(method)
  );
}

/** An artifact's relative path in a runner URL: each segment encoded, the slashes kept. */
const artifactPath = (path: string): string => path.split('/').map(encodeURIComponent).join('/');

/** The runner's protocol (platform/runner-protocol.ts) as calls; shared by the operator and the API server. */
export class RunnerClient {
  private readonly base: string;

  constructor(private readonly options: RunnerClientOptions) {
    this.base = options.endpoint.replace(/\/+$/, '');
  }

  /** Idempotent by prompt id: a second call for a known prompt answers its current state. */
  async dispatchPrompt(
    taskId: string,
    promptId: string,
    request: DispatchPromptRequest,
  ): Promise<PromptState> {
    return this.call(
      'PUT',
      `/v1/tasks/${taskId}/prompts/${promptId}`,
      PromptStateSchema,
      request,
      DISPATCH_TIMEOUT_MS,
    );
  }

  /** Answers once the runner answers its health check (over a kept-alive connection when there is one). */
  async ping(): Promise<void> {
    await this.call('GET', '/healthz', z.unknown());
  }

  /** The prompt's state, or undefined when the runner never received it. */
  async getPrompt(taskId: string, promptId: string): Promise<PromptState | undefined> {
    try {
      return await this.call('GET', `/v1/tasks/${taskId}/prompts/${promptId}`, PromptStateSchema);
    } catch (err) {
      if (err instanceof RunnerRequestError && err.status === 404) return undefined;
      throw err;
    }
  }

  /** Answers once the prompt is terminal (a running executor is killed first); undefined when unknown. */
  async cancelPrompt(taskId: string, promptId: string): Promise<PromptState | undefined> {
    try {
      return await this.call(
        'POST',
        `/v1/tasks/${taskId}/prompts/${promptId}/cancel`,
        PromptStateSchema,
        undefined,
        DISPATCH_TIMEOUT_MS,
      );
    } catch (err) {
      if (err instanceof RunnerRequestError && err.status === 404) return undefined;
      throw err;
    }
  }

  async listEvents(taskId: string, options: { after?: number; promptId?: string } = {}): Promise<EventsPage> {
    return this.call('GET', `/v1/tasks/${taskId}/events${query(options)}`, EventsPageSchema);
  }

  /**
   * The task's events after `after`, live, until `signal` aborts or the connection drops (then the
   * iterator ends; callers resume from the last seq they saw). Malformed events are an error.
   */
  async *streamEvents(taskId: string, options: EventStreamOptions): AsyncGenerator<TaskEvent> {
    for await (const frames of this.streamEventFrames(taskId, options)) {
      for (const { event } of frames) yield event;
    }
  }

  /**
   * As streamEvents, a batch at a time: the events of each chunk read from the runner, each with
   * its SSE frame (validated, to be relayed without serializing it again).
   */
  async *streamEventFrames(taskId: string, options: EventStreamOptions): AsyncGenerator<EventFrame[]> {
    const response = await this.fetch(`/v1/tasks/${taskId}/events${query(options)}`, {
      headers: { accept: 'text/event-stream' },
      signal: options.signal,
    });
    if (response.body === null) return;
    const reader = new EventFrameReader();
    try {
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        const frames = reader.push(chunk);
        if (frames.length > 0) yield frames;
      }
    } catch (err) {
      if (options.signal.aborted) return;
      if (err instanceof MalformedEventError) throw err;
      return; // the connection dropped: the caller resumes from the last seq it saw
    }
  }

  /** The TCP ports processes of the workspace listen on (not the runner's own). */
  async listeningPorts(): Promise<number[]> {
    return (await this.call('GET', '/v1/ports', ListeningPortsSchema)).ports;
  }

  /** The files under /code/artifacts with their MD5s, and the sync base. */
  async listArtifacts(): Promise<ArtifactManifest> {
    return this.call('GET', '/v1/artifacts', ArtifactManifestSchema, undefined, ARTIFACT_TIMEOUT_MS);
  }

  /** The bytes of one artifact as a stream (the caller consumes or destroys it); undefined when missing. */
  async readArtifact(path: string, signal?: AbortSignal): Promise<Readable | undefined> {
    let response: Response;
    try {
      response = await this.fetch(
        `/v1/artifacts/${artifactPath(path)}`,
        signal === undefined ? {} : { signal },
      );
    } catch (err) {
      if (err instanceof RunnerRequestError && err.status === 404) return undefined;
      throw err;
    }
    return response.body === null ? Readable.from([]) : Readable.fromWeb(response.body);
  }

  /** Streams `body` into the artifact (atomically replaced on the runner); answers what was written. */
  async writeArtifact(
    path: string,
    body: NodeJS.ReadableStream,
    options: { contentMd5?: string; signal?: AbortSignal } = {},
  ): Promise<ArtifactFile> {
    // A Node stream as a fetch body (`duplex: 'half'`): sent chunk by chunk, never whole in memory.
    const init: RequestInit & { duplex: 'half' } = {
      method: 'PUT',
      body: Readable.toWeb(Readable.from(body)),
      duplex: 'half',
      headers: {
        'content-type': 'application/octet-stream',
        ...(options.contentMd5 === undefined ? {} : { 'content-md5': options.contentMd5 }),
      },
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    };
    const response = await this.fetch(`/v1/artifacts/${artifactPath(path)}`, init);
    const parsed = ArtifactFileSchema.safeParse(parseJson(await response.text()));
    if (!parsed.success) throw new RunnerRequestError(`PUT artifact: unexpected answer from the runner`);
    return parsed.data;
  }

  async deleteArtifact(path: string): Promise<void> {
    await this.call('DELETE', `/v1/artifacts/${artifactPath(path)}`, z.unknown());
  }

  /** Replaces the sync base (atomically on the runner). */
  async writeArtifactBase(base: ArtifactBase): Promise<void> {
    await this.call('PUT', '/v1/artifacts-base', z.unknown(), { base }, ARTIFACT_TIMEOUT_MS);
  }

  private async call<T>(
    method: string,
    path: string,
    schema: z.ZodType<T>,
    body?: unknown,
    timeoutMs = this.options.timeoutMs ?? 10_000,
  ): Promise<T> {
    const response = await this.fetch(path, {
      method,
      signal: AbortSignal.timeout(timeoutMs),
      ...(body === undefined
        ? {}
        : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    const text = await response.text();
    const parsed = schema.safeParse(parseJson(text));
    if (!parsed.success) throw new RunnerRequestError(`${method} ${path}: unexpected answer from the runner`);
    return parsed.data;
  }

  /** fetch with the token; a network failure or non-2xx becomes a RunnerRequestError. */
  private async fetch(path: string, init: RequestInit): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${this.options.token}`);
    const send = (): Promise<Response> => fetch(`${this.base}${path}`, { ...init, headers });
    let response: Response;
    try {
      response = await send().catch((err: unknown) => {
        // A kept-alive connection whose other end went away unseen (the runner's VM was reset, its
        // node crashed) fails before any answer: send once more, on a new connection, when that is
        // harmless. Found by the VM suite's hard reset ("other side closed").
        if (!mayResend(init)) throw err;
        return send();
      });
    } catch (err) {
      throw new RunnerRequestError(`the runner at ${this.base} cannot be reached`, undefined, { cause: err });
    }
    if (!response.ok) {
      const detail = await response.text().catch(() => '');
      throw new RunnerRequestError(
        `${init.method ?? 'GET'} ${path}: the runner answered ${response.status} ${detail.slice(0, 300)}`,
        response.status,
      );
    }
    return response;
  }
}

function query(options: { after?: number | undefined; promptId?: string | undefined }): string {
  const params = new URLSearchParams();
  if (options.after !== undefined) params.set('after', String(options.after));
  if (options.promptId !== undefined) params.set('promptId', options.promptId);
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}
