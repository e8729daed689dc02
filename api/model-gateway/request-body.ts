import type { IncomingMessage } from 'node:http';

/** The request body is over the gateway's limit (answered 413 in the provider's shape). */
export class BodyTooLargeError extends Error {
  constructor(limit: number) {
    super(`the request body is over ${limit} bytes`);
  }
}

/**
 * Reads a whole body, up to `limit` bytes. A model call's body is its context (tens of kilobytes,
 * megabytes with images): read whole, a call over the limit is refused before anything is sent.
 * Past the limit the rest is discarded, not read into memory, so the refusal can still be answered.
 */
export function readBoundedBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      req.resume();
      chunks.length = 0;
      reject(new BodyTooLargeError(limit));
    };
    req.on('data', onData);
    req.once('end', () => {
      if (size <= limit) resolve(Buffer.concat(chunks, size));
    });
    req.once('error', reject);
  });
}

/** Whether the declared length is already over the limit (refused without reading). */
export const declaredTooLarge = (req: IncomingMessage, limit: number): boolean =>
  Number(req.headers['content-length'] ?? 0) > limit;
