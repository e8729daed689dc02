import { z } from 'zod';
import { artifactPrefix } from '../../../platform/objectstore/keys.js';
import type { DownloadUrlSigner, ObjectStore } from '../../../platform/objectstore/types.js';
import {
  defaultContentType,
  isObjectStoreError,
  listAllObjects,
} from '../../../platform/objectstore/types.js';
import {
  ArtifactFilenameSchema,
  ArtifactPageSchema,
  ArtifactRecordSchema,
  ContentTypeSchema,
  newestArtifactFirst,
  presentArtifact,
} from './record.js';
import { DOWNLOAD_URL_TTL_SECONDS, sendObject } from './download.js';
import { receiveArtifacts } from './multipart-upload.js';
import { storageUnavailable } from '../../storage-errors.js';
import { ApiError } from '../../errors.js';
import { recordArtifactUploadsOpen, recordArtifactsChanged } from './changes.js';
import { findWorkspace } from '../find-workspace.js';
import { PaginationQuerySchema, paginate } from '../../pagination.js';
import type { ReadModel } from '../../read-model.js';
import type { ResourceStore } from '../../../platform/store/types.js';
import { defineRoute } from '../../route.js';
import type { RouteDefinition } from '../../route.js';

const TAG = 'Artifacts';
const MiB = 1024 * 1024;

/** docs/api.md#limits defaults; each configurable. */
export interface ArtifactLimits {
  /** File bytes of one multipart POST (413 beyond). Default 32 MiB. */
  uploadRequestBytes: number;
  /** The largest object a signed upload URL is issued for. Default 512 MiB (the signed PUT handler's limit). */
  signedUploadBytes: number;
  /** Lifetime of upload URLs. Default 1 h. */
  uploadUrlTtlSeconds: number;
}

export const DEFAULT_ARTIFACT_LIMITS: ArtifactLimits = {
  uploadRequestBytes: 32 * MiB,
  signedUploadBytes: 512 * MiB,
  uploadUrlTtlSeconds: 3600,
};

export interface ArtifactRoutesDeps {
  /** Where the workspace is told its artifacts changed (changes.ts). */
  store: ResourceStore;
  readModel: ReadModel;
  objectStore: ObjectStore;
  limits?: Partial<ArtifactLimits>;
  /** Downloads answer 307 to a presigned URL of this store (AGENTRY_ARTIFACT_DOWNLOAD_REDIRECT); omitted: streamed. */
  downloadRedirect?: DownloadUrlSigner | undefined;
}

const workspaceId = z.string().describe("The workspace's (agent computer's) id");
const WorkspaceParamsSchema = z.object({ id: workspaceId });
const ArtifactParamsSchema = z.object({
  id: workspaceId,
  filename: ArtifactFilenameSchema.describe("The artifact's name, URL-encoded (its slashes may stay plain)"),
});

export const UploadUrlBodySchema = z.strictObject({
  files: z
    .array(
      z.strictObject({
        filename: ArtifactFilenameSchema,
        contentType: ContentTypeSchema.optional(),
        size: z.number().int().min(0).optional(),
      }),
    )
    .min(1)
    .max(100),
});

const UploadUrlSchema = z.object({
  filename: z.string(),
  uploadUrl: z.url(),
  expiresAt: z.iso.datetime(),
  /** The Content-Type the PUT must carry (S3 signs it). */
  contentType: z.string(),
});

/** The store's own failures in the API's words; anything else stays a 500. */
async function storage<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (isObjectStoreError(err, 'Unavailable')) throw storageUnavailable(err);
    if (isObjectStoreError(err, 'InvalidKey'))
      throw new ApiError('validation_error', 'The filename is not usable as an artifact name', [
        {
          path: 'filename',
          message: 'not a valid object key here (too long, or it conflicts with a directory)',
        },
      ]);
    throw err;
  }
}

const ETAG = "The artifact's ETag (quoted)";
/** What a download's headers tell a client besides the type. */
const DOWNLOAD_HEADERS = {
  ETag: ETAG,
  'Content-Disposition': "attachment, with the artifact's name (never rendered inline)",
  'Accept-Ranges': 'bytes',
};

/** The multipart form of an upload, for the document: one or more file parts named `files` (their filenames are the artifact names). */
const ArtifactUploadFormSchema = z.strictObject({
  files: z.array(z.string().meta({ contentMediaType: 'application/octet-stream' })).min(1),
});

export function artifactRoutes(deps: ArtifactRoutesDeps): RouteDefinition[] {
  const limits: ArtifactLimits = { ...DEFAULT_ARTIFACT_LIMITS, ...deps.limits };
  const { objectStore, readModel, store } = deps;
  /** The caller's workspace and its artifact prefix; 404 for another org's, a deleted or an unknown workspace. */
  const workspaceOf = async (namespace: string, id: string) => {
    const workspace = await findWorkspace(readModel, namespace, id);
    return { workspace, prefix: artifactPrefix(namespace, workspace.metadata.name) };
  };
  /** The prefix alone, for a read. */
  const prefixOf = async (namespace: string, id: string): Promise<string> =>
    (await workspaceOf(namespace, id)).prefix;

  return [
    defineRoute({
      method: 'get',
      path: '/v1/workspaces/:id/artifacts',
      operationId: 'listArtifacts',
      summary: "List a workspace's artifacts, newest first",
      tag: TAG,
      scope: 'artifacts:read',
      params: WorkspaceParamsSchema,
      query: PaginationQuerySchema,
      responses: {
        200: { description: 'A page of artifacts', schema: ArtifactPageSchema },
      },
      handler: async ({ params, query, principal }) => {
        const prefix = await prefixOf(principal.namespace, params.id);
        const records = (await storage(listAllObjects(objectStore, prefix)))
          .map((info) => presentArtifact(prefix, info))
          .sort(newestArtifactFirst);
        return { status: 200, body: paginate(records, query, (record) => record) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/workspaces/:id/artifacts/:filename',
      operationId: 'downloadArtifact',
      summary: 'Download one artifact (filename URL-encoded); honours Range and If-None-Match',
      tag: TAG,
      scope: 'artifacts:read',
      params: ArtifactParamsSchema,
      headers: [
        { name: 'Range', description: 'One byte range (`bytes=a-b`, `a-` or `-n`): answered 206' },
        { name: 'If-None-Match', description: 'ETags the client holds: 304 when one is current' },
      ],
      responses: {
        200: {
          description: 'The bytes, in the type they were stored with (application/octet-stream when unknown)',
          mediaType: '*/*',
          headers: DOWNLOAD_HEADERS,
        },
        206: {
          description: 'The requested byte range',
          mediaType: '*/*',
          headers: { ...DOWNLOAD_HEADERS, 'Content-Range': 'Which bytes of the whole: `bytes a-b/size`' },
        },
        304: { description: 'Not modified (If-None-Match named the current ETag)', headers: { ETag: ETAG } },
        307: {
          description: `With the S3 store and download redirects on: GET the bytes at Location (no API key; valid ${DOWNLOAD_URL_TTL_SECONDS} s), which answers as this route would`,
          headers: { Location: 'A presigned URL of the object store' },
        },
        416: {
          description: 'The range lies outside the artifact',
          headers: { 'Content-Range': 'The whole size: `bytes */size`' },
        },
      },
      handler: async ({ params, principal, req, res }) => {
        const prefix = await prefixOf(principal.namespace, params.id);
        await storage(
          sendObject(req, res, {
            objectStore,
            key: `${prefix}${params.filename}`,
            filename: params.filename,
            redirectTo: deps.downloadRedirect,
            onStreamError: (err) => {
              req.log.warn({ err, reqId: req.id }, 'artifact download failed mid-stream');
            },
          }),
        );
        return undefined;
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/workspaces/:id/artifacts',
      operationId: 'uploadArtifacts',
      summary: `Upload artifacts: multipart/form-data, repeatable field "files", at most ${limits.uploadRequestBytes} bytes per request`,
      tag: TAG,
      scope: 'artifacts:write',
      params: WorkspaceParamsSchema,
      streamedBody: { mediaType: 'multipart/form-data', schema: ArtifactUploadFormSchema },
      responses: {
        201: {
          description: 'Stored (all of them, or none)',
          schema: z.object({ data: z.array(ArtifactRecordSchema) }),
        },
      },
      handler: async ({ params, principal, req, res }) => {
        const { workspace, prefix } = await workspaceOf(principal.namespace, params.id);
        const stored = await receiveArtifacts(req, res, {
          objectStore,
          prefix,
          maxBytes: limits.uploadRequestBytes,
        });
        await recordArtifactsChanged(store, workspace);
        return { status: 201, body: { data: stored.map((info) => presentArtifact(prefix, info)) } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/workspaces/:id/artifacts/upload-url',
      operationId: 'createArtifactUploadUrls',
      summary: 'Signed upload URLs for large artifacts: PUT the bytes there (no API key) within the hour',
      tag: TAG,
      scope: 'artifacts:write',
      params: WorkspaceParamsSchema,
      body: UploadUrlBodySchema,
      responses: {
        201: { description: 'Upload URLs issued', schema: z.object({ data: z.array(UploadUrlSchema) }) },
      },
      handler: async ({ params, body, principal }) => {
        const { workspace, prefix } = await workspaceOf(principal.namespace, params.id);
        const tooBig = body.files.find((file) => (file.size ?? 0) > limits.signedUploadBytes);
        if (tooBig !== undefined)
          throw new ApiError(
            'payload_too_large',
            `${tooBig.filename}: a signed upload carries at most ${limits.signedUploadBytes} bytes`,
          );
        const data = await Promise.all(
          body.files.map(async (file) => {
            const contentType = file.contentType ?? defaultContentType(file.filename);
            const signed = await storage(
              objectStore.signedPutUrl(`${prefix}${file.filename}`, {
                expiresInSeconds: limits.uploadUrlTtlSeconds,
                contentType,
                size: file.size,
              }),
            );
            return {
              filename: file.filename,
              uploadUrl: signed.url,
              expiresAt: signed.expiresAt,
              contentType,
            };
          }),
        );
        const lastExpiry = data
          .map((url) => url.expiresAt)
          .sort()
          .at(-1);
        if (lastExpiry !== undefined) await recordArtifactUploadsOpen(store, workspace, lastExpiry);
        return { status: 201, body: { data } };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/workspaces/:id/artifacts/:filename',
      operationId: 'deleteArtifact',
      summary: 'Delete one artifact',
      tag: TAG,
      scope: 'artifacts:write',
      params: ArtifactParamsSchema,
      responses: { 204: { description: 'Deleted' } },
      handler: async ({ params, principal }) => {
        const { workspace, prefix } = await workspaceOf(principal.namespace, params.id);
        if (!(await storage(objectStore.delete(`${prefix}${params.filename}`))))
          throw ApiError.notFound('Artifact');
        await recordArtifactsChanged(store, workspace);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/workspaces/:id/artifacts',
      operationId: 'deleteAllArtifacts',
      summary: 'Delete every artifact of a workspace',
      tag: TAG,
      scope: 'artifacts:write',
      params: WorkspaceParamsSchema,
      responses: {
        200: { description: 'How many were deleted', schema: z.object({ deleted: z.number().int() }) },
      },
      handler: async ({ params, principal }) => {
        const { workspace, prefix } = await workspaceOf(principal.namespace, params.id);
        const deleted = await storage(objectStore.deletePrefix(prefix));
        if (deleted > 0) await recordArtifactsChanged(store, workspace);
        return { status: 200, body: { deleted } };
      },
    }),
  ];
}
