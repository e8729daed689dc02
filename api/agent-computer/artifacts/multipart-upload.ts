import type { IncomingMessage, ServerResponse } from 'node:http';
import { Transform } from 'node:stream';
import type { Readable, TransformCallback } from 'node:stream';
import busboy from 'busboy';
import type { FileInfo } from 'busboy';
import { checkArtifactName } from '../../../platform/objectstore/artifact-names.js';
import type { ArtifactNameCheck } from '../../../platform/objectstore/artifact-names.js';
import type { ObjectInfo, ObjectStore } from '../../../platform/objectstore/types.js';
import {
  defaultContentType,
  isObjectStoreError,
  OCTET_STREAM,
  ObjectStoreError,
} from '../../../platform/objectstore/types.js';
import { ApiError } from '../../errors.js';
import { storageUnavailable } from '../../storage-errors.js';

/** The one repeatable field of POST /workspaces/:id/artifacts. */
export const FILES_FIELD = 'files';
/** Files per request; more is a client that should use upload-url. */
const MAX_FILES = 1000;
/** Multipart framing allowed on top of the file bytes before a declared Content-Length is refused unread. */
const FRAMING_ALLOWANCE = 1024 * 1024;
/** Buffer of each part's stream: large enough to keep disk and S3 writes in big chunks, small per request. */
const PART_HIGH_WATER_MARK = 256 * 1024;

export const isMultipart = (req: IncomingMessage): boolean =>
  /^multipart\/form-data\s*;/i.test(req.headers['content-type'] ?? '');

/** Counts the file bytes of the whole request and fails the part that crosses the limit. */
class RequestBudget {
  used = 0;
  constructor(readonly limit: number) {}

  meter(): Transform {
    const count = (chunk: Buffer): boolean => {
      this.used += chunk.length;
      return this.used <= this.limit;
    };
    const limit = this.limit;
    return new Transform({
      highWaterMark: PART_HIGH_WATER_MARK,
      transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
        if (count(chunk)) done(null, chunk);
        else done(new ObjectStoreError('TooLarge', `the request's files exceed ${limit} bytes`));
      },
    });
  }
}

/**
 * The part's declared type, unless it is what a client sends when it knows nothing (busboy reports
 * `text/plain` for a part without one, browsers `application/octet-stream`): then the name decides.
 */
function contentTypeOf(info: FileInfo, name: string): string {
  const declared = info.mimeType;
  const guessed = defaultContentType(name);
  if ((declared === 'text/plain' || declared === OCTET_STREAM) && guessed !== OCTET_STREAM) return guessed;
  return declared;
}

export interface ReceiveOptions {
  objectStore: ObjectStore;
  /** The workspace's artifact prefix; each part lands at prefix + its checked filename. */
  prefix: string;
  /** File bytes per request (docs/api.md#limits: 32 MiB). */
  maxBytes: number;
}

/**
 * Streams every `files` part of a multipart request into the store as it arrives, never holding a
 * whole file. All or nothing: on any failure (a bad name, another field, past the limit, a broken
 * body) the parts that already landed are deleted before the error is thrown; reading stops at the
 * first failure and the connection is closed after the answer rather than drained.
 */
export async function receiveArtifacts(
  req: IncomingMessage,
  res: ServerResponse,
  options: ReceiveOptions,
): Promise<ObjectInfo[]> {
  if (!isMultipart(req))
    throw new ApiError('unsupported_media_type', 'Artifact uploads must be multipart/form-data');
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > options.maxBytes + FRAMING_ALLOWANCE) {
    res.setHeader('Connection', 'close');
    throw tooLarge(options.maxBytes);
  }
  const upload = new MultipartUpload(req, options);
  const outcome = await upload.run();
  if (outcome.failure === undefined && outcome.landed.length === 0)
    throw new ApiError('validation_error', `Send at least one file in the "${FILES_FIELD}" field`, [
      { path: FILES_FIELD, message: 'no file' },
    ]);
  if (outcome.failure === undefined) return outcome.landed;
  if (outcome.stoppedEarly) res.setHeader('Connection', 'close');
  const undone = await Promise.allSettled(outcome.landed.map((info) => options.objectStore.delete(info.key)));
  const stuck = undone.find((result) => result.status === 'rejected');
  if (stuck !== undefined)
    throw new ApiError(
      'service_unavailable',
      'The upload failed and storage failed while removing its files: some may remain',
      undefined,
      { cause: stuck.reason },
    );
  throw outcome.failure;
}

const tooLarge = (limit: number): ApiError =>
  new ApiError(
    'payload_too_large',
    `An upload request carries at most ${limit} bytes of files; use upload-url for larger ones`,
  );

const badPart = (message: string, path = FILES_FIELD): ApiError =>
  new ApiError('validation_error', `Invalid multipart upload: ${message}`, [{ path, message }]);

function toApiError(err: unknown, limit: number): Error {
  if (isObjectStoreError(err, 'TooLarge')) return tooLarge(limit);
  if (isObjectStoreError(err, 'InvalidKey')) return badPart('a filename is not usable as an artifact name');
  if (isObjectStoreError(err, 'Unavailable')) return storageUnavailable(err);
  return err instanceof Error ? err : new Error('storing an artifact failed', { cause: err });
}

interface Outcome {
  landed: ObjectInfo[];
  failure: Error | undefined;
  /** Reading stopped before the body's end: the connection cannot be reused. */
  stoppedEarly: boolean;
}

/** One request's parse: a busboy parser feeding one store write per part. */
class MultipartUpload {
  private readonly budget: RequestBudget;
  private readonly writes: Promise<ObjectInfo | undefined>[] = [];
  private readonly open = new Set<Readable>();
  private failure: Error | undefined;
  private stoppedEarly = false;
  private finish: () => void = () => undefined;

  constructor(
    private readonly req: IncomingMessage,
    private readonly options: ReceiveOptions,
  ) {
    this.budget = new RequestBudget(options.maxBytes);
  }

  async run(): Promise<Outcome> {
    const parsed = new Promise<void>((resolve) => {
      this.finish = resolve;
    });
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: this.req.headers,
        preservePath: true, // a filename may be a relative path: `reports/q1.csv`
        defParamCharset: 'utf8',
        highWaterMark: PART_HIGH_WATER_MARK,
        fileHwm: PART_HIGH_WATER_MARK,
        limits: { files: MAX_FILES, parts: MAX_FILES + 1, fields: MAX_FILES },
      });
    } catch {
      throw new ApiError('unsupported_media_type', 'The multipart body has no boundary');
    }
    parser.on('file', (field, stream, info) => {
      this.onFile(field, stream, info);
    });
    parser.on('field', (field) => {
      this.fail(
        badPart(`only file parts named "${FILES_FIELD}" are accepted, got a field "${field}"`, field),
      );
    });
    parser.on('partsLimit', () => {
      this.fail(badPart(`at most ${MAX_FILES} files per request`));
    });
    parser.on('filesLimit', () => {
      this.fail(badPart(`at most ${MAX_FILES} files per request`));
    });
    parser.on('error', (err: unknown) => {
      this.fail(badPart(err instanceof Error ? err.message : 'malformed multipart body', ''));
    });
    parser.on('close', () => {
      this.finish();
    });
    this.req.once('close', () => {
      if (!this.req.complete) this.fail(badPart('the request body was cut short', ''));
    });
    this.req.pipe(parser);
    await parsed;
    this.req.unpipe(parser);
    const stored = await Promise.all(this.writes);
    const landed = stored.filter((info): info is ObjectInfo => info !== undefined);
    return { landed, failure: this.failure, stoppedEarly: this.stoppedEarly };
  }

  private onFile(field: string, stream: Readable, info: FileInfo): void {
    if (this.failure !== undefined) {
      stream.resume();
      return;
    }
    if (field !== FILES_FIELD) {
      stream.resume();
      this.fail(badPart(`only file parts named "${FILES_FIELD}" are accepted, got "${field}"`, field));
      return;
    }
    const checked: ArtifactNameCheck =
      info.filename === undefined
        ? { ok: false, reason: 'a file part needs a filename' }
        : checkArtifactName(info.filename);
    if (!checked.ok) {
      stream.resume();
      this.fail(badPart(`invalid artifact filename: ${checked.reason}`));
      return;
    }
    this.open.add(stream);
    const body = stream.pipe(this.budget.meter());
    stream.on('error', (err) => body.destroy(err));
    // The store may not have attached to the body yet when it fails; its put reports the error.
    body.on('error', () => undefined);
    // Never rejects: a failed write becomes the upload's failure at once (and no rejection waits unhandled).
    const write = this.options.objectStore
      .put(`${this.options.prefix}${checked.name}`, body, { contentType: contentTypeOf(info, checked.name) })
      .then(
        (stored) => stored,
        (err: unknown) => {
          this.fail(toApiError(err, this.budget.limit));
          return undefined;
        },
      )
      .finally(() => this.open.delete(stream));
    this.writes.push(write);
  }

  /** Records the first failure, stops reading the request and ends the parts still being written. */
  private fail(error: Error): void {
    if (this.failure !== undefined) return;
    this.failure = error;
    if (!this.req.readableEnded) this.stoppedEarly = true;
    this.req.unpipe();
    for (const stream of this.open) stream.destroy(new Error('upload abandoned'));
    this.finish();
  }
}
