import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { ObjectStore } from '../../platform/objectstore/types.js';
import { isObjectStoreError } from '../../platform/objectstore/types.js';
import { uploadedFileKey } from '../../platform/objectstore/keys.js';
import { storageUnavailable } from '../storage-errors.js';
import { defineRoute } from '../route.js';
import type { RouteDefinition } from '../route.js';

const TAG = 'Files';

/** docs/api.md#files-and-artifacts: the default largest upload. */
export const MAX_UPLOAD_BYTES = 512 * 1024 * 1024;
/** How long an upload URL (and a runner's download URL) stays valid. */
export const FILE_URL_TTL_SECONDS = 3600;

/** A plain file name: the file lands at /code/<filename> unless the task names another path. */
const FilenameSchema = z
  .string()
  .min(1)
  .max(255)
  // A pattern rather than a check in code, so the OpenAPI document states the rule too.
  .regex(
    // eslint-disable-next-line no-control-regex -- control characters are what it refuses
    /^(?!.*\.\.)[^/\\\u0000-\u001f\u007f]+$/,
    'must be a file name without "/", "\\", ".." or control characters',
  );

/** The body of POST /files, under this installation's largest signed upload. */
export const createFileBodySchema = (maxBytes: number) =>
  z.strictObject({
    filename: FilenameSchema,
    contentType: z.string().min(1).max(255).optional(),
    size: z.number().int().min(0).max(maxBytes).optional(),
  });

export const CreatedFileSchema = z.object({
  id: z.uuid(),
  filename: z.string(),
  uploadUrl: z.url(),
  expiresAt: z.iso.datetime(),
});

export const fileRoutes = (deps: { objectStore: ObjectStore; maxUploadBytes: number }): RouteDefinition[] => [
  defineRoute({
    method: 'post',
    path: '/v1/files',
    operationId: 'createFile',
    summary: 'Reserve an uploaded file: PUT its bytes to uploadUrl (no API key) within an hour',
    tag: TAG,
    scope: 'files:write',
    body: createFileBodySchema(deps.maxUploadBytes),
    responses: { 201: { description: 'Upload URL issued', schema: CreatedFileSchema } },
    handler: async ({ body, principal }) => {
      const id = randomUUID();
      try {
        const { url, expiresAt } = await deps.objectStore.signedPutUrl(
          uploadedFileKey(principal.namespace, id),
          {
            expiresInSeconds: FILE_URL_TTL_SECONDS,
            contentType: body.contentType,
            size: body.size,
          },
        );
        return { status: 201, body: { id, filename: body.filename, uploadUrl: url, expiresAt } };
      } catch (err) {
        if (isObjectStoreError(err, 'Unavailable')) throw storageUnavailable(err);
        throw err;
      }
    },
  }),
];
