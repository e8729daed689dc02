import { z } from 'zod';
import { TaskRecordSchema } from '../task/present.js';
import { TaskStreamFrameSchema } from '../task/schemas.js';
import type { Components, JsonSchema } from './components.js';
import { BINARY, errorContent } from './operation.js';

/**
 * The paths the server answers outside the route definitions (api/app.ts mounts them itself, before
 * authentication): probes, metrics, this document, share links and signed storage URLs. None
 * needs an API key (`security: []`).
 */

const HealthSchema = z.object({ status: z.literal('ok') });
const ReadinessSchema = z.object({ status: z.enum(['ready', 'starting']) });

const OPERATIONS = 'Operations';

/** What a probe answers besides itself: a request refused before it (a header over the limit: 431). */
const refusedEarly = (components: Components): JsonSchema => ({
  '4XX': {
    description: 'A request refused before it reaches the endpoint (headers over the limit: 431)',
    content: errorContent(components, '/'),
  },
});

const json = (components: Components, schema: z.ZodType): JsonSchema => ({
  'application/json': { schema: components.schemaOf(schema, 'output') },
});

const probe = (components: Components, operationId: string, summary: string): JsonSchema => ({
  get: {
    operationId,
    summary,
    description: 'Answers 200 while the process serves HTTP; no API key.',
    tags: [OPERATIONS],
    security: [],
    responses: {
      200: { description: 'Alive', content: json(components, HealthSchema) },
      ...refusedEarly(components),
    },
  },
});

function operationalPaths(components: Components): Record<string, JsonSchema> {
  return {
    '/healthz': probe(components, 'getHealthz', 'Liveness probe'),
    '/health': probe(components, 'getHealth', 'Liveness probe where hosted-service clients look for it'),
    '/readyz': {
      get: {
        operationId: 'getReadyz',
        summary: 'Readiness probe',
        description: 'Ready once the caches are synced and reads can be answered; no API key.',
        tags: [OPERATIONS],
        security: [],
        responses: {
          200: { description: 'Ready', content: json(components, ReadinessSchema) },
          503: {
            description: 'Starting: the caches are not synced yet',
            content: json(components, ReadinessSchema),
          },
          ...refusedEarly(components),
        },
      },
    },
    '/metrics': {
      get: {
        operationId: 'getMetrics',
        summary: 'Prometheus metrics',
        description: 'The metrics in the Prometheus text exposition format; no API key.',
        tags: [OPERATIONS],
        security: [],
        responses: {
          200: { description: 'The metrics', content: { 'text/plain': { schema: { type: 'string' } } } },
          ...refusedEarly(components),
        },
      },
    },
    '/v1/openapi.json': {
      get: {
        operationId: 'getOpenApiDocument',
        summary: 'This OpenAPI document',
        description:
          'The OpenAPI 3.1 document of the API, generated from the schemas that validate requests.',
        tags: [OPERATIONS],
        security: [],
        responses: {
          200: {
            description: 'The document',
            content: { 'application/json': { schema: { type: 'object' } } },
          },
          ...refusedEarly(components),
        },
      },
    },
  };
}

const shareTokenParameter = {
  name: 'token',
  in: 'path',
  required: true,
  description: 'The token of the share link (shareUrl)',
  schema: { type: 'string' },
};

function shareLinkPath(components: Components): Record<string, JsonSchema> {
  const notShared = {
    description: 'No such public task (a forged, revoked or deleted link)',
    content: errorContent(components, '/v1/share'),
  };
  return {
    '/v1/share/{token}': {
      get: {
        operationId: 'readSharedTask',
        summary: 'Read a public task through its share link, without an API key',
        description: 'The link of a task made public (PATCH /v1/tasks/{id}/visibility); read-only.',
        tags: ['Tasks'],
        security: [],
        parameters: [shareTokenParameter],
        responses: {
          200: { description: 'The task', content: json(components, TaskRecordSchema) },
          404: notShared,
        },
      },
    },
    '/v1/share/{token}/events': {
      get: {
        operationId: 'streamSharedTaskEvents',
        summary: "Follow a public task's events through its share link, without an API key",
        description:
          'The frames of GET /v1/tasks/{id}/events (resume with Last-Event-ID; promptId, after and all as there), read-only; the stream ends when the link stops granting the task.',
        tags: ['Tasks'],
        security: [],
        parameters: [shareTokenParameter],
        responses: {
          200: {
            description: 'A stream of `event` frames, then one `done` frame',
            content: {
              'text/event-stream': { schema: components.schemaOf(TaskStreamFrameSchema, 'output') },
            },
          },
          404: notShared,
        },
      },
    },
  };
}

const signedQuery = (method: 'GET' | 'PUT'): JsonSchema[] => [
  {
    name: 'method',
    in: 'query',
    required: true,
    description: 'The method the URL was signed for',
    schema: { type: 'string', enum: [method] },
  },
  {
    name: 'expires',
    in: 'query',
    required: true,
    description: 'When the URL expires, in seconds since the epoch',
    schema: { type: 'string', pattern: '^\\d{1,12}$' },
  },
  {
    name: 'signature',
    in: 'query',
    required: true,
    description: 'The HMAC of the URL',
    schema: { type: 'string' },
  },
  ...(method === 'PUT'
    ? [
        {
          name: 'size',
          in: 'query',
          required: false,
          description: 'The size in bytes the URL was issued for: a larger body is refused',
          schema: { type: 'string' },
        },
      ]
    : []),
];

/** `/v1/storage/{key}`: where the signed URLs of the filesystem object store point (uploads and downloads). */
function storagePath(components: Components): Record<string, JsonSchema> {
  const keyParameter = {
    name: 'key',
    in: 'path',
    required: true,
    description: "The object's key, URL-encoded, as the signed URL carries it",
    schema: { type: 'string' },
  };
  const failures = (extra: Record<number, string>): Record<number, JsonSchema> =>
    Object.fromEntries(
      Object.entries({
        400: 'A malformed key',
        403: 'A bad or expired signature, or another method than the one signed',
        ...extra,
      }).map(([status, description]) => [
        status,
        { description, content: errorContent(components, '/v1/storage') },
      ]),
    );
  const common = {
    tags: ['Files'],
    security: [],
    description:
      'A signed URL (uploadUrl of POST /v1/files or of artifact upload URLs) carries its own authorization; no API key. Served with the filesystem object store (the embedded default); with S3 the URLs point at S3.',
  };
  return {
    '/v1/storage/{key}': {
      get: {
        ...common,
        operationId: 'downloadSignedObject',
        summary: 'Download an object through a signed URL',
        parameters: [keyParameter, ...signedQuery('GET')],
        responses: {
          200: {
            description: 'The bytes, in the type they were stored with',
            headers: { ETag: { description: "The object's ETag", schema: { type: 'string' } } },
            content: { '*/*': { schema: BINARY } },
          },
          ...failures({ 404: 'No such object' }),
        },
      },
      put: {
        ...common,
        operationId: 'uploadSignedObject',
        summary: 'Upload the bytes of a file or an artifact to its signed URL',
        parameters: [keyParameter, ...signedQuery('PUT')],
        requestBody: { required: true, content: { '*/*': { schema: BINARY } } },
        responses: {
          200: {
            description: 'Stored',
            headers: { ETag: { description: "The stored object's ETag", schema: { type: 'string' } } },
          },
          ...failures({ 413: 'Larger than the URL allows', 503: 'Storage is unavailable' }),
        },
      },
    },
  };
}

/** The paths of the document that no route definition declares. */
export const unroutedPaths = (
  components: Components,
  options: { servesSignedUrls: boolean },
): Record<string, JsonSchema> => ({
  ...operationalPaths(components),
  ...shareLinkPath(components),
  ...(options.servesSignedUrls ? storagePath(components) : {}),
});
