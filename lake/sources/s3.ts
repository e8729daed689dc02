import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, HeadObjectCommand, S3Client, paginateListObjectsV2 } from '@aws-sdk/client-s3';
import type { S3ClientConfig } from '@aws-sdk/client-s3';
import type { S3Source } from '../../platform/lake-config/dataset-source.js';
import type { TargetPolicy } from '../../platform/outbound-targets.js';
import { checkTarget, guardedAgents } from './outbound.js';
import { SourceError, bareEtag, isDataFile, isoTime } from './types.js';
import type { DatasetReader, ObjectVersion, SourceObject } from './types.js';

/** AWS needs some region to sign with; `followRegionRedirects` finds a bucket's real one. */
const DEFAULT_REGION = 'us-east-1';

/**
 * The S3 client for one dataset: its own credentials, region, endpoint and timeout, and agents
 * whose every connection passes the SSRF guard.
 */
export function s3ClientConfig(source: S3Source, policy: TargetPolicy): S3ClientConfig {
  const config: S3ClientConfig = {
    region: source.region ?? DEFAULT_REGION,
    followRegionRedirects: true,
    maxAttempts: 3,
    requestHandler: guardedAgents(policy),
  };
  if (source.endpoint !== undefined) {
    config.endpoint = source.endpoint;
    config.forcePathStyle = true;
  }
  if (source.clientTimeoutMs !== undefined)
    // Connecting, waiting for the answer's headers, and any silence while its body streams: each
    // at most client_timeout. A large object that keeps flowing may take longer in all.
    config.requestHandler = {
      ...guardedAgents(policy),
      connectionTimeout: source.clientTimeoutMs,
      requestTimeout: source.clientTimeoutMs,
      throwOnRequestTimeout: true,
      socketTimeout: source.clientTimeoutMs,
    };
  switch (source.auth.mode) {
    case 'key':
      config.credentials = {
        accessKeyId: source.auth.accessKeyId,
        secretAccessKey: source.auth.secretAccessKey,
      };
      break;
    case 'public':
      // Anonymous requests: a signer that leaves the request alone, and credentials given so the
      // SDK does not look for them in the environment (a lake in AWS would otherwise sign with
      // its instance role, and one without any would fail to find credentials).
      config.signer = { sign: (request) => Promise.resolve(request) };
      config.credentials = { accessKeyId: '', secretAccessKey: '' };
      break;
    case 'iam_role':
      break; // the SDK's default chain: environment, web identity (IRSA), instance profile
  }
  return config;
}

interface AwsErrorShape {
  name?: unknown;
  message?: unknown;
  $metadata?: { httpStatusCode?: unknown };
}

const REASONS: Record<string, string> = {
  NoSuchKey: 'the object does not exist (NoSuchKey)',
  NotFound: 'the object does not exist (NotFound)',
  NoSuchBucket: 'the bucket does not exist (NoSuchBucket)',
  AccessDenied: 'access denied (AccessDenied): check s3_auth and what the credentials may read',
  InvalidAccessKeyId: 'the access key was refused (InvalidAccessKeyId)',
  SignatureDoesNotMatch: 'the secret key was refused (SignatureDoesNotMatch)',
  CredentialsProviderError: 'no AWS credentials were found for s3_auth iam_role',
  TimeoutError: 'the server did not answer within client_timeout (TimeoutError)',
};

/** What went wrong, in words an operator can act on. AWS messages hold no credentials. */
export function describeS3Error(err: unknown): string {
  const shape: AwsErrorShape = typeof err === 'object' && err !== null ? err : {};
  const name = typeof shape.name === 'string' ? shape.name : 'Error';
  const known = REASONS[name];
  if (known !== undefined) return known;
  // The SSRF guard's refusal (platform/outbound-targets.ts) says it all.
  if ((shape as { code?: unknown }).code === 'EREFUSEDTARGET' && typeof shape.message === 'string')
    return shape.message;
  const status = shape.$metadata?.httpStatusCode;
  if (status === 403) return 'access denied (HTTP 403): check s3_auth and what the credentials may read';
  if (status === 404) return 'not found (HTTP 404)';
  const message = typeof shape.message === 'string' ? shape.message : String(err);
  return `${name}: ${message}`;
}

function isAbort(err: unknown, signal: AbortSignal): boolean {
  return signal.aborted || (err instanceof Error && err.name === 'AbortError');
}

class S3DatasetReader implements DatasetReader {
  private readonly client: S3Client;
  /** A custom endpoint's host, checked once before the first request (agents never see an IP literal). */
  private endpointChecked: Promise<void> | undefined;

  constructor(
    private readonly source: S3Source,
    private readonly policy: TargetPolicy,
  ) {
    this.client = new S3Client(s3ClientConfig(source, policy));
  }

  private checkEndpoint(): Promise<void> {
    const { endpoint } = this.source;
    if (endpoint === undefined) return Promise.resolve();
    this.endpointChecked ??= checkTarget(new URL(endpoint), this.policy, this.display(this.source.key));
    return this.endpointChecked;
  }

  private display(key: string): string {
    return `s3://${this.source.bucket}/${key}`;
  }

  async list(signal: AbortSignal): Promise<SourceObject[]> {
    const { source } = this;
    await this.checkEndpoint();
    if (!source.isPrefix) {
      const object = await this.head(source.key, signal);
      if (object === undefined)
        throw new SourceError(`${this.display(source.key)}: ${REASONS.NoSuchKey ?? 'not found'}`);
      return [object];
    }
    const objects: SourceObject[] = [];
    try {
      const pages = paginateListObjectsV2(
        { client: this.client, pageSize: 1000 },
        { Bucket: source.bucket, Prefix: source.key },
      );
      for await (const page of pages) {
        signal.throwIfAborted();
        objects.push(...this.dataObjects(page.Contents ?? []));
      }
    } catch (err) {
      if (isAbort(err, signal) || err instanceof SourceError) throw err;
      throw new SourceError(`${this.display(source.key)}: ${describeS3Error(err)}`, { cause: err });
    }
    if (objects.length === 0)
      throw new SourceError(`${this.display(source.key)}: no objects under this prefix`);
    return objects;
  }

  /** The key's part below the dataset's prefix, or undefined when the dataset does not hold that key. */
  private relativeOf(key: string): string | undefined {
    const { source } = this;
    if (!source.isPrefix) return key === source.key ? key.slice(key.lastIndexOf('/') + 1) : undefined;
    if (!key.startsWith(source.key)) return undefined;
    const relative = key.slice(source.key.length);
    return isDataFile(relative) ? relative : undefined;
  }

  async head(key: string, signal: AbortSignal): Promise<SourceObject | undefined> {
    const relative = this.relativeOf(key);
    if (relative === undefined) return undefined;
    await this.checkEndpoint();
    try {
      const answer = await this.client.send(new HeadObjectCommand({ Bucket: this.source.bucket, Key: key }), {
        abortSignal: signal,
      });
      if (answer.ContentLength === 0 && this.source.isPrefix) return undefined; // a "folder" placeholder
      return this.object(key, relative, {
        etag: bareEtag(answer.ETag),
        lastModified: isoTime(answer.LastModified),
        size: answer.ContentLength,
      });
    } catch (err) {
      if (isAbort(err, signal)) throw err;
      const shape: AwsErrorShape = typeof err === 'object' && err !== null ? err : {};
      if (shape.name === 'NotFound' || shape.name === 'NoSuchKey' || shape.$metadata?.httpStatusCode === 404)
        return undefined;
      throw new SourceError(`${this.display(key)}: ${describeS3Error(err)}`, { cause: err });
    }
  }

  /** "Folder" placeholders (zero bytes, often ending in /) and marker files hold no data. */
  private dataObjects(
    entries: readonly {
      Key?: string | undefined;
      Size?: number | undefined;
      ETag?: string | undefined;
      LastModified?: Date | undefined;
    }[],
  ): SourceObject[] {
    const objects: SourceObject[] = [];
    for (const entry of entries) {
      const key = entry.Key ?? '';
      const relative = key.slice(this.source.key.length);
      if (entry.Size !== 0 && isDataFile(relative))
        objects.push(
          this.object(key, relative, {
            etag: bareEtag(entry.ETag),
            lastModified: isoTime(entry.LastModified),
            size: entry.Size,
          }),
        );
    }
    return objects;
  }

  private object(key: string, relative: string, version: ObjectVersion): SourceObject {
    const display = this.display(key);
    return {
      ...version,
      key,
      display,
      relative,
      download: async (target, signal) => {
        await this.checkEndpoint();
        try {
          const answer = await this.client.send(
            new GetObjectCommand({ Bucket: this.source.bucket, Key: key }),
            {
              abortSignal: signal,
            },
          );
          if (!(answer.Body instanceof Readable)) throw new Error('the answer has no readable body');
          await pipeline(answer.Body, createWriteStream(target, { flags: 'wx' }), { signal });
          return {
            etag: bareEtag(answer.ETag),
            lastModified: isoTime(answer.LastModified),
            size: answer.ContentLength,
          };
        } catch (err) {
          if (isAbort(err, signal)) throw err;
          throw new SourceError(`${display}: ${describeS3Error(err)}`, { cause: err });
        }
      },
    };
  }

  close(): void {
    this.client.destroy();
  }
}

export const s3Reader = (source: S3Source, policy: TargetPolicy): DatasetReader =>
  new S3DatasetReader(source, policy);
