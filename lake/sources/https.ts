import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { HttpsSource } from '../../platform/lake-config/dataset-source.js';
import { SourceError } from './types.js';
import type { DatasetReader, SourceObject } from './types.js';

/** One file over https (a dataset's `from` is the file's URL). */
export function httpsReader(source: HttpsSource): DatasetReader {
  // Without the query: a presigned URL's signature is a credential for as long as it lasts.
  const url = new URL(source.url);
  const display = `${url.origin}${url.pathname}`;
  const object: SourceObject = {
    display,
    relative: url.pathname.split('/').pop() ?? '',
    async download(target, signal) {
      const response = await answer(source, display, signal);
      try {
        // undici's stream type and node:stream/web's are the same object with different typings.
        const body = Readable.fromWeb(response.body as WebReadableStream<Uint8Array>);
        await pipeline(body, createWriteStream(target, { flags: 'wx' }), { signal });
      } catch (err) {
        if (signal.aborted) throw err;
        throw new SourceError(`${display}: the download failed (${describeFetchError(err)})`, { cause: err });
      }
    },
  };
  return {
    list: () => Promise.resolve([object]),
    close: () => undefined,
  };
}

/**
 * The response, once its headers arrived: within client_timeout, like the s3 connector's wait
 * for an answer (the body then streams as long as it takes).
 */
async function answer(source: HttpsSource, display: string, signal: AbortSignal): Promise<Response> {
  const timeout = new AbortController();
  const timer =
    source.clientTimeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timeout.abort(new DOMException('client_timeout elapsed', 'TimeoutError'));
        }, source.clientTimeoutMs);
  let response: Response;
  try {
    response = await fetch(source.url, { signal: AbortSignal.any([signal, timeout.signal]) });
  } catch (err) {
    if (signal.aborted) throw err;
    throw new SourceError(`${display}: cannot be fetched (${describeFetchError(err)})`, { cause: err });
  } finally {
    clearTimeout(timer);
  }
  if (!response.ok || response.body === null) {
    await response.body?.cancel();
    throw new SourceError(`${display}: the server answered HTTP ${response.status}`);
  }
  return response;
}

function describeFetchError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  if (err.name === 'TimeoutError') return 'client_timeout elapsed';
  const cause: unknown = err.cause;
  return cause instanceof Error ? `${err.message}: ${cause.message}` : err.message;
}
