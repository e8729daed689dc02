import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { HttpsSource } from '../../platform/lake-config/dataset-source.js';
import type { TargetPolicy } from '../../platform/outbound-targets.js';
import { guardedGet } from './outbound.js';
import { SourceError } from './types.js';
import type { DatasetReader, SourceObject } from './types.js';

/**
 * One file over https (a dataset's `from` is the file's URL), through the SSRF guard. The answer's
 * headers must arrive within client_timeout, like the s3 connector's wait for an answer; the body
 * then streams as long as it takes.
 */
export function httpsReader(source: HttpsSource, policy: TargetPolicy): DatasetReader {
  // Without the query: a presigned URL's signature is a credential for as long as it lasts.
  const url = new URL(source.url);
  const display = `${url.origin}${url.pathname}`;
  const object: SourceObject = {
    display,
    relative: url.pathname.split('/').pop() ?? '',
    async download(target, signal) {
      let response;
      try {
        response = await guardedGet(url, {
          policy,
          signal,
          display,
          headersTimeoutMs: source.clientTimeoutMs,
        });
      } catch (err) {
        if (signal.aborted || err instanceof SourceError) throw err;
        throw new SourceError(`${display}: cannot be fetched (${describeNetworkError(err)})`, { cause: err });
      }
      try {
        await pipeline(response, createWriteStream(target, { flags: 'wx' }), { signal });
      } catch (err) {
        if (signal.aborted) throw err;
        throw new SourceError(`${display}: the download failed (${describeNetworkError(err)})`, {
          cause: err,
        });
      }
    },
  };
  return {
    list: () => Promise.resolve([object]),
    close: () => undefined,
  };
}

/** A network error's code, or its message (Node's errors may come from another realm: no instanceof). */
function describeNetworkError(err: unknown): string {
  if (typeof err !== 'object' || err === null) return String(err);
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === 'string') return code;
  return typeof message === 'string' ? message.slice(0, 300) : 'the request failed';
}
