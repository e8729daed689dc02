import { parseJson } from './json.js';
import type { ReadableStreamReadResult } from 'node:stream/web';
import type { z } from 'zod';
import {
  DEFAULT_MAX_RESULT_BYTES,
  LakeErrorBodySchema,
  LakeStatusSchema,
  RefreshResultSchema,
  SqlResultSchema,
} from './lake-protocol.js';
import type {
  LakeConfigRequest,
  LakeStatus,
  RefreshRequest,
  SqlRequest,
  SqlResult,
} from './lake-protocol.js';

/** Of a SQL answer, beyond the rows' bytes the request allowed: columns and the envelope. */
const ANSWER_OVERHEAD_BYTES = 1024 * 1024;

/** A lake server answered with an error, or could not be reached (`status` undefined). */
export class LakeRequestError extends Error {
  override name = 'LakeRequestError';

  constructor(
    message: string,
    readonly status?: number,
    /** The lake's error code (`sql_error`, `timeout`, `not_loaded`...) when it answered one. */
    readonly code?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  get unreachable(): boolean {
    return this.status === undefined || this.status === 502 || this.status === 503;
  }
}

export interface LakeClientOptions {
  /** `http://host:port` of the lake server (ContextLake status.endpoint). */
  endpoint: string;
  token: string;
  /** For calls other than SQL. Default 10 s. */
  timeoutMs?: number;
}

/** The lake server's protocol (platform/lake-protocol.ts) as calls; shared by the operator and the API server. */
export class LakeClient {
  private readonly base: string;

  constructor(private readonly options: LakeClientOptions) {
    this.base = options.endpoint.replace(/\/+$/, '');
  }

  async status(): Promise<LakeStatus> {
    return this.call('GET', '/v1/status', LakeStatusSchema);
  }

  /** Hands the lake a new configuration; it loads in the background and keeps serving the old data meanwhile. */
  async applyConfig(request: LakeConfigRequest): Promise<LakeStatus> {
    return this.call('PUT', '/v1/config', LakeStatusSchema, request);
  }

  /**
   * Queues refreshes (`mode` auto by default: the given object `changes`, or a comparison of the
   * sources with the tables; `full` reloads); answers the names the lake knows (it ignores the others).
   */
  async refresh(
    datasets: string[],
    options: Pick<RefreshRequest, 'mode' | 'changes'> = {},
  ): Promise<string[]> {
    const request: RefreshRequest = {
      datasets,
      ...(options.mode === undefined ? {} : { mode: options.mode }),
      ...(options.changes === undefined || options.changes.length === 0 ? {} : { changes: options.changes }),
    };
    const result = await this.call('POST', '/v1/refresh', RefreshResultSchema, request);
    return result.accepted;
  }

  /** Runs a query; the lake's own timeout applies, `signal` cuts the wait (the caller's deadline). */
  async sql(request: SqlRequest, signal?: AbortSignal): Promise<SqlResult> {
    const response = await this.fetch('/v1/sql', {
      method: 'POST',
      body: JSON.stringify(request),
      headers: { 'content-type': 'application/json' },
      ...(signal === undefined ? {} : { signal }),
    });
    const limit = (request.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES) + ANSWER_OVERHEAD_BYTES;
    return parse(SqlResultSchema, await readAtMost(response, limit), response.status, 'POST /v1/sql');
  }

  private async call<T>(method: string, path: string, schema: z.ZodType<T>, body?: unknown): Promise<T> {
    const response = await this.fetch(path, {
      method,
      signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
      ...(body === undefined
        ? {}
        : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    return parse(schema, await response.text(), response.status, `${method} ${path}`);
  }

  /** fetch with the token; a network failure or non-2xx becomes a LakeRequestError. */
  private async fetch(path: string, init: RequestInit): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${this.options.token}`);
    let response: Response;
    try {
      response = await fetch(`${this.base}${path}`, { ...init, headers });
    } catch (err) {
      throw new LakeRequestError(`the lake server at ${this.base} cannot be reached`, undefined, undefined, {
        cause: err,
      });
    }
    if (!response.ok) {
      const text = await response.text().catch(() => '');
      const body = LakeErrorBodySchema.safeParse(parseJson(text));
      const message = body.success ? body.data.error.message : text.slice(0, 300);
      throw new LakeRequestError(message, response.status, body.success ? body.data.error.code : undefined);
    }
    return response;
  }
}

/** An answer the lake sent but that is not what the protocol says: not a reason to ask again. */
function parse<T>(schema: z.ZodType<T>, text: string, status: number, what: string): T {
  const parsed = schema.safeParse(parseJson(text));
  if (!parsed.success)
    throw new LakeRequestError(
      `${what}: unexpected answer from the lake server`,
      status,
      'unexpected_answer',
    );
  return parsed.data;
}

/** The body as text, refused past `limit` bytes (a lake that ignores the request's limit). */
async function readAtMost(response: Response, limit: number): Promise<string> {
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Buffer[] = [];
  let size = 0;
  for (;;) {
    const read: ReadableStreamReadResult<unknown> = await reader.read();
    if (read.done) break;
    // A view of bytes, whichever realm made it (jest's VM modules have their own Uint8Array).
    if (!ArrayBuffer.isView(read.value)) continue;
    size += read.value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw new LakeRequestError(
        `the answer is larger than the limit of ${limit} bytes`,
        413,
        'result_too_large',
      );
    }
    chunks.push(Buffer.from(read.value.buffer, read.value.byteOffset, read.value.byteLength));
  }
  return Buffer.concat(chunks).toString('utf8');
}
