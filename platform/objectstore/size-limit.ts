import { createHash } from 'node:crypto';
import type { Hash } from 'node:crypto';
import { Transform } from 'node:stream';
import { ObjectStoreError } from './types.js';

/**
 * Counts the bytes of an upload as they pass and fails the stream with TooLarge past `maxSize`, so
 * no backend holds or stores more than allowed; with `md5`, also digests them for an ETag. Without
 * `maxSize`, a meter only (bytes and MD5 of a stream that passes through).
 */
export class SizeLimit extends Transform {
  /** Not `size`: lib-storage's Upload takes a body's `size` property for its length. */
  bytes = 0;
  exceeded = false;
  private readonly hash: Hash | undefined;
  private digest: Buffer | undefined;

  constructor(
    private readonly maxSize: number | undefined,
    private readonly what: string,
    options: { md5?: boolean } = {},
  ) {
    super();
    this.hash = options.md5 === true ? createHash('md5') : undefined;
  }

  override _transform(
    chunk: Buffer,
    _encoding: BufferEncoding,
    done: (err?: Error | null, data?: Buffer) => void,
  ): void {
    this.bytes += chunk.length;
    if (this.maxSize !== undefined && this.bytes > this.maxSize) {
      this.exceeded = true;
      done(new ObjectStoreError('TooLarge', `${this.what} is larger than ${this.maxSize} bytes`));
      return;
    }
    this.hash?.update(chunk);
    done(null, chunk);
  }

  /** The MD5 of what passed, once it all has; only with `md5`. */
  md5(): Buffer {
    if (this.hash === undefined) throw new Error('SizeLimit was made without md5');
    this.digest ??= this.hash.digest();
    return this.digest;
  }

  /** The quoted MD5 hex of what passed (S3's single-part ETag); only with `md5`. */
  etag(): string {
    return `"${this.md5().toString('hex')}"`;
  }
}
