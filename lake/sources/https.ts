import { createWriteStream } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { HttpsSource } from '../../platform/lake-config/dataset-source.js';
import type { TargetPolicy } from '../../platform/outbound-targets.js';
import { guardedGet } from './outbound.js';
import { SourceError, bareEtag, isoTime } from './types.js';
import type { DatasetReader, ObjectVersion, SourceObject } from './types.js';

/**
 * One file over https (a dataset's `from` is the file's URL), through the SSRF guard. The answer's
 * headers must arrive within client_timeout, like the s3 connector's wait for an answer; the body
 * then streams as long as it takes. Its version is what the headers say (ETag, Last-Modified,
 * Content-Length), asked with HEAD; a server that refuses HEAD gives an object of unknown version,
 * fetched again at every check.
 */
export function httpsReader(source: HttpsSource, policy: TargetPolicy): DatasetReader {
  // Without the query: a presigned URL's signature is a credential for as long as it lasts.
  const url = new URL(source.url);
  const display = `${url.origin}${url.pathname}`;
  const request = (method: 'GET' | 'HEAD', signal: AbortSignal) =>
    guardedGet(url, { policy, signal, display, headersTimeoutMs: source.clientTimeoutMs, method });
  const object = (version: ObjectVersion): SourceObject => ({
    ...version,
    key: display,
    display,
    relative: url.pathname.split('/').pop() ?? '',
    async download(target, signal) {
      let response;
      try {
        response = await request('GET', signal);
      } catch (err) {
        if (signal.aborted || err instanceof SourceError) throw err;
        throw new SourceError(`${display}: cannot be fetched (${describeNetworkError(err)})`, { cause: err });
      }
      const got = versionOf(response);
      try {
        await pipeline(response, createWriteStream(target, { flags: 'wx' }), { signal });
      } catch (err) {
        if (signal.aborted) throw err;
        throw new SourceError(`${display}: the download failed (${describeNetworkError(err)})`, {
          cause: err,
        });
      }
      return got;
    },
  });
  /** The object with its version; undefined when the server says it has none (404, 410). */
  const head = async (signal: AbortSignal): Promise<SourceObject | undefined> => {
    let response;
    try {
      response = await request('HEAD', signal);
    } catch (err) {
      if (signal.aborted) throw err;
      if (err instanceof SourceError && /HTTP (404|410)$/.test(err.message)) return undefined;
      // A refused target is final; any other trouble shows again, named, when the GET tries.
      if (err instanceof SourceError && !/answered HTTP/.test(err.message)) throw err;
      return object({});
    }
    response.resume();
    return object(versionOf(response));
  };
  return {
    async list(signal) {
      const found = await head(signal);
      if (found === undefined) throw new SourceError(`${display}: the server answered HTTP 404`);
      return [found];
    },
    head: (key, signal) =>
      key === display || key === source.url ? head(signal) : Promise.resolve(undefined),
    close: () => undefined,
  };
}

function versionOf(response: IncomingMessage): ObjectVersion {
  const length = Number(response.headers['content-length']);
  return {
    etag: bareEtag(response.headers.etag),
    lastModified: isoTime(response.headers['last-modified']),
    size: Number.isInteger(length) && length >= 0 ? length : undefined,
  };
}

/** A network error's code, or its message (Node's errors may come from another realm: no instanceof). */
function describeNetworkError(err: unknown): string {
  if (typeof err !== 'object' || err === null) return String(err);
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === 'string') return code;
  return typeof message === 'string' ? message.slice(0, 300) : 'the request failed';
}
