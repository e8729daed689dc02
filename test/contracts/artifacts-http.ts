// HTTP helpers of the artifact tests: multipart bodies built byte by byte (so a test controls every
// header, `filename*` included) and requests through node:http, which hands back the answer even when
// the server stops reading the body early (a 413 before the upload ends), and sends paths unnormalized.
import { request } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';

export interface Part {
  /** Default `files`. */
  field?: string;
  /** Sent as `filename*=UTF-8''<percent-encoded>` when `encoded`, else as a quoted `filename`. */
  filename?: string;
  encoded?: boolean;
  contentType?: string;
  data: Buffer | string;
}

export const BOUNDARY = 'agentry-test-boundary-7f3a9c';
export const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;

function partHead(part: Part): Buffer {
  const name = `form-data; name="${part.field ?? 'files'}"`;
  const file =
    part.filename === undefined
      ? ''
      : part.encoded === true
        ? `; filename*=UTF-8''${encodeURIComponent(part.filename)}`
        : `; filename="${part.filename}"`;
  const type = part.contentType === undefined ? '' : `\r\nContent-Type: ${part.contentType}`;
  return Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${name}${file}${type}\r\n\r\n`);
}

/** A whole multipart body in memory: for small test uploads. */
export function multipart(parts: Part[]): Buffer {
  const chunks = parts.flatMap((part) => [partHead(part), Buffer.from(part.data), Buffer.from('\r\n')]);
  return Buffer.concat([...chunks, Buffer.from(`--${BOUNDARY}--\r\n`)]);
}

/** `size` deterministic bytes in 64 KiB chunks, generated as read: never held whole. */
export function* generatedChunks(size: number, seed = 0): Generator<Buffer> {
  const chunk = 64 * 1024;
  for (let offset = 0; offset < size; offset += chunk) {
    yield Buffer.alloc(Math.min(chunk, size - offset), (seed + offset / chunk) % 251);
  }
}

/** A streamed multipart body: parts whose bytes are generated as they are sent. */
export function streamedMultipart(parts: { filename: string; size: number; seed?: number }[]): Readable {
  return Readable.from(
    (function* () {
      for (const part of parts) {
        yield partHead({ filename: part.filename, contentType: 'application/octet-stream', data: '' });
        yield* generatedChunks(part.size, part.seed);
        yield Buffer.from('\r\n');
      }
      yield Buffer.from(`--${BOUNDARY}--\r\n`);
    })(),
  );
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * One request through node:http. `path` goes out exactly as given (no `..` resolution); a Readable
 * body is sent chunked (no Content-Length). Resolves with the response even if the server closed
 * the connection before reading the whole body.
 */
export function send(
  baseUrl: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: Buffer | Readable } = {},
): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: init.method ?? 'GET',
        headers: {
          ...init.headers,
          ...(Buffer.isBuffer(init.body) ? { 'content-length': String(init.body.length) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
        });
        res.on('error', reject);
      },
    );
    // A write after the server answered and closed is expected here; the response decides.
    req.on('error', (err) => {
      setTimeout(() => {
        reject(err);
      }, 200);
    });
    if (init.body === undefined) req.end();
    else if (Buffer.isBuffer(init.body)) req.end(init.body);
    else init.body.pipe(req);
  });
}
