import { z } from 'zod';
import { errorShapeOfPath } from './errors.js';
import type { RouteDefinition } from './route.js';

type JsonSchema = Record<string, unknown>;

const ErrorSchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  }),
});

/** docs/api.md#errors: the data-context API answers `{ error, code, errors? }` (`errors` on validation). */
const LakeErrorSchema = z.object({
  error: z.string(),
  code: z.string(),
  errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});

const jsonSchema = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
  const converted: JsonSchema = z.toJSONSchema(schema, { io, unrepresentable: 'any' });
  delete converted.$schema; // the document's dialect is OpenAPI 3.1's
  return converted;
};

/**
 * A request body's schema as the server accepts it: unknown fields are ignored (api/lenient-body.ts),
 * so no object in it is closed, though the zod schema is strict to find them.
 */
function acceptingUnknownFields(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(acceptingUnknownFields);
  if (typeof schema !== 'object' || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key, value]) => !(key === 'additionalProperties' && value === false))
      .map(([key, value]) => [key, acceptingUnknownFields(value)]),
  );
}

/** Turns a zod object schema of path or query parameters into OpenAPI parameter objects. */
function parameters(schema: z.ZodType | undefined, where: 'path' | 'query'): JsonSchema[] {
  if (schema === undefined) return [];
  const object = jsonSchema(schema, 'input');
  const properties = (object.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set(Array.isArray(object.required) ? object.required : []);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    schema: property,
  }));
}

function operation(route: RouteDefinition): JsonSchema {
  const responses: Record<string, JsonSchema> = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    responses[status] =
      spec.schema === undefined
        ? { description: spec.description }
        : {
            description: spec.description,
            content: { 'application/json': { schema: jsonSchema(spec.schema, 'output') } },
          };
  }
  const errorContent = {
    'application/json': {
      schema: jsonSchema(errorShapeOfPath(route.path) === 'lake' ? LakeErrorSchema : ErrorSchema, 'output'),
    },
  };
  if (route.body !== undefined)
    responses['413'] = { description: 'The JSON body is over 1 MiB', content: errorContent };
  responses.default = { description: 'Error', content: errorContent };
  return {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    'x-required-scope': route.scope,
    parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query')],
    ...(route.streamedBody === undefined
      ? {}
      : {
          requestBody: {
            required: true,
            content: {
              [route.streamedBody.mediaType]: { schema: jsonSchema(route.streamedBody.schema, 'input') },
            },
          },
        }),
    ...(route.body === undefined
      ? {}
      : {
          requestBody: {
            // The server reads a missing body as `{}`: the body is required only where `{}` is refused.
            required: !route.body.safeParse({}).success,
            content: {
              'application/json': { schema: acceptingUnknownFields(jsonSchema(route.body, 'input')) },
            },
          },
        }),
    responses,
  };
}

/** The OpenAPI 3.1 document of the public API, generated from the same zod schemas that validate. */
export function openApiDocument(
  routes: readonly RouteDefinition[],
  info: { version: string; serverUrl: string },
): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    paths[path] = { ...paths[path], [route.method]: operation(route) };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Agentry API', version: info.version },
    servers: [{ url: info.serverUrl }],
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'API_KEY' } },
    },
    security: [{ apiKey: [] }],
    paths,
  };
}
