import type { RouteDefinition } from '../route.js';
import { Components } from './components.js';
import type { JsonSchema } from './components.js';
import { operation } from './operation.js';
import { requestNames, responseNames } from './schema-names.js';
import { unroutedPaths } from './unrouted-paths.js';

const TAGS = [
  ['Agent computers', 'Workspaces (agent computers, sandboxes) that tasks run in'],
  ['Tasks', 'Prompts to a coding agent, their history and their event streams'],
  ['Files', 'Files uploaded for tasks, and the signed URLs that carry bytes'],
  ['Artifacts', 'Files a workspace produced'],
  ['Webhooks', 'Signed notifications of task events'],
  ['Context lake', "SQL over the organization's datasets (Pro plan)"],
  ['Administration', 'Organizations of the installation (installation:admin)'],
  ['Operations', 'Probes, metrics and this document'],
] as const;

/**
 * docs/api.md#authentication: the key travels in any of three headers (header names are not case
 * sensitive); one scheme each, any of them satisfies an operation.
 */
const KEY_SCHEMES = { ApiKey: 'API_KEY', ApiKeyDashed: 'api-key', XApiKey: 'x-api-key' } as const;

const securitySchemes = Object.fromEntries(
  Object.entries(KEY_SCHEMES).map(([scheme, header]) => [
    scheme,
    { type: 'apiKey', in: 'header', name: header, description: `The API key in the ${header} header` },
  ]),
);

/** Express's `/v1/tasks/:id` as OpenAPI's `/v1/tasks/{id}`. */
export const templatePath = (expressPath: string): string => expressPath.replace(/:([A-Za-z_]+)/g, '{$1}');

/**
 * The OpenAPI 3.1 document of the API, generated from the same zod schemas that validate: named
 * types in `components.schemas`, every path the server answers (those of the route definitions,
 * and the probes, metrics, share links and signed storage URLs api/app.ts mounts itself).
 */
export function openApiDocument(
  routes: readonly RouteDefinition[],
  info: { version: string; serverUrl: string; servesSignedUrls: boolean },
): JsonSchema {
  const components = new Components({ responses: responseNames, requests: requestNames });
  const paths: Record<string, JsonSchema> = unroutedPaths(components, info);
  for (const route of routes) {
    const path = templatePath(route.path);
    paths[path] = { ...paths[path], [route.method]: operation(components, route) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agentry API',
      version: info.version,
      description:
        'Agent computers, tasks with their prompt history and event streams, files, artifacts, signed webhooks and the context lake. Errors answer `{ error: { code, message } }` (the context lake: `{ error, code }`).',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: info.serverUrl }],
    tags: TAGS.map(([name, description]) => ({ name, description })),
    security: Object.keys(KEY_SCHEMES).map((scheme) => ({ [scheme]: [] })),
    paths,
    components: { schemas: components.all(), securitySchemes },
  };
}
