import type { z } from 'zod';
import { ErrorBodySchema, LakeErrorBodySchema, errorShapeOfPath } from '../errors.js';
import type { HeaderSpec, ResponseSpec, RouteDefinition } from '../route.js';
import type { Components, JsonSchema } from './components.js';

/** The body of a download or an upload: bytes of whatever type (generators make it a Blob). */
export const BINARY: JsonSchema = { type: 'string', format: 'binary' };

/** `Foo` from `fooBar`: the name of an operation's anonymous request body is `FooBarRequest`. */
const capitalized = (text: string): string => `${text.charAt(0).toUpperCase()}${text.slice(1)}`;

const isRecord = (value: unknown): value is JsonSchema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The error body of a path (docs/api.md#errors: the context lake answers its own shape). */
export const errorContent = (components: Components, path: string): JsonSchema => ({
  'application/json': {
    schema: components.schemaOf(
      errorShapeOfPath(path) === 'lake' ? LakeErrorBodySchema : ErrorBodySchema,
      'output',
    ),
  },
});

export const headerParameters = (headers: readonly HeaderSpec[] | undefined): JsonSchema[] =>
  (headers ?? []).map(({ name, description }) => ({
    name,
    in: 'header',
    required: false,
    description,
    schema: { type: 'string' },
  }));

/**
 * A zod object schema of path or query parameters as OpenAPI parameters, each with the
 * description its field carries (`.describe()`): a parameter without one is a mistake here.
 */
export function parameters(
  components: Components,
  schema: z.ZodType | undefined,
  where: 'path' | 'query',
  operationId: string,
): JsonSchema[] {
  if (schema === undefined) return [];
  const object = components.schemaOf(schema, 'input');
  const properties = isRecord(object.properties) ? object.properties : {};
  const required = new Set(Array.isArray(object.required) ? object.required : []);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = isRecord(property) ? property : {};
    if (typeof description !== 'string') {
      throw new Error(`OpenAPI: the ${where} parameter ${name} of ${operationId} has no description`);
    }
    return { name, in: where, required: where === 'path' || required.has(name), description, schema: rest };
  });
}

const responseHeaders = (headers: Record<string, string> | undefined): JsonSchema =>
  headers === undefined
    ? {}
    : {
        headers: Object.fromEntries(
          Object.entries(headers).map(([name, description]) => [
            name,
            { description, schema: { type: 'string' } },
          ]),
        ),
      };

/** One documented response: JSON by default; a stream of server-sent frames; bytes; or an error. */
export function response(
  components: Components,
  path: string,
  status: number,
  spec: ResponseSpec,
): JsonSchema {
  const base = { description: spec.description, ...responseHeaders(spec.headers) };
  if (spec.mediaType === 'text/event-stream' && spec.schema !== undefined) {
    const frames = { type: 'array', items: components.schemaOf(spec.schema, 'output') };
    return { ...base, content: { [spec.mediaType]: { schema: frames } } };
  }
  if (spec.mediaType !== undefined) {
    const schema = spec.schema === undefined ? BINARY : components.schemaOf(spec.schema, 'output');
    return { ...base, content: { [spec.mediaType]: { schema } } };
  }
  if (spec.schema !== undefined) {
    return {
      ...base,
      content: { 'application/json': { schema: components.schemaOf(spec.schema, 'output') } },
    };
  }
  return status >= 400 ? { ...base, content: errorContent(components, path) } : base;
}

/**
 * The failures every route shares, where they apply and the route did not describe them itself:
 * validation (400), the API key (401), its scopes or plan (403), a resource in the path (404), a
 * JSON body over the limit (413).
 */
function commonFailures(route: RouteDefinition): Record<number, string> {
  const validated = [route.params, route.query, route.body, route.streamedBody].some(
    (part) => part !== undefined,
  );
  const failures: Record<number, string> = {
    401: 'No API key, or an invalid or expired one (missing_api_key, invalid_api_key)',
    403: 'The key lacks the scope, or the organization the plan or permission (insufficient_scopes, …)',
  };
  if (validated) failures[400] = 'The request is invalid (validation_error); `details` say where';
  if (route.path.includes(':')) failures[404] = 'Not found, or not visible to this key (not_found)';
  if (route.body !== undefined) failures[413] = 'The JSON body is over 1 MiB (payload_too_large)';
  return failures;
}

function requestBody(components: Components, route: RouteDefinition): JsonSchema {
  if (route.streamedBody !== undefined) {
    const { mediaType, schema } = route.streamedBody;
    return {
      requestBody: {
        required: true,
        content: { [mediaType]: { schema: components.schemaOf(schema, 'input', { strict: true }) } },
      },
    };
  }
  if (route.body === undefined) return {};
  const schema = components.schemaOf(route.body, 'input', {
    nameIfAnonymous: `${capitalized(route.operationId)}Request`,
  });
  // The server reads a missing body as `{}`: the body is required only where `{}` is refused.
  return {
    requestBody: { required: !route.body.safeParse({}).success, content: { 'application/json': { schema } } },
  };
}

/** The OpenAPI operation of a route, from the same schemas that validate its requests. */
export function operation(components: Components, route: RouteDefinition): JsonSchema {
  const responses: Record<string, JsonSchema> = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    responses[status] = response(components, route.path, Number(status), spec);
  }
  for (const [status, description] of Object.entries(commonFailures(route))) {
    responses[status] ??= { description, content: errorContent(components, route.path) };
  }
  responses.default = { description: 'Any other failure', content: errorContent(components, route.path) };
  const scope =
    `Needs an API key with the \`${route.scope}\` scope` +
    (route.promptToken === true ? " (or a workspace's prompt token, as `Authorization: Bearer`)." : '.');
  return {
    operationId: route.operationId,
    summary: route.summary,
    description: route.description === undefined ? scope : `${route.description}\n\n${scope}`,
    tags: [route.tag],
    'x-required-scope': route.scope,
    parameters: [
      ...parameters(components, route.params, 'path', route.operationId),
      ...parameters(components, route.query, 'query', route.operationId),
      ...headerParameters(route.headers),
    ],
    ...requestBody(components, route),
    responses,
  };
}
