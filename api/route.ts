import type { Request, Response, Router } from 'express';
import type { z } from 'zod';
import type { Principal } from './auth/principal.js';
import { principalOf, requirePromptTokenAllowed, requireScope } from './auth/principal.js';
import type { Scope } from './auth/scopes.js';
import { ApiError } from './errors.js';
import { JsonText } from './json-text.js';
import { RouteTable } from './route-table.js';
import type { RouteHandler } from './route-table.js';
import { ignoredFieldsWarning, parseLenient } from './lenient-body.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /**
   * The body's media type when it is not JSON: a stream the handler writes itself (server-sent
   * events, with `schema` describing one frame) or bytes of any type (a wildcard range, no schema).
   */
  mediaType?: string;
  /** Response headers worth a client's attention: name → what it carries. */
  headers?: Record<string, string>;
}

/** A request header a handler reads itself (not validated here): documented in the OpenAPI document. */
export interface HeaderSpec {
  name: string;
  description: string;
}

/** What a handler answers; a handler that streams writes to `res` itself and returns undefined. */
export interface RouteResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  principal: Principal;
  req: Request;
  res: Response;
}

/** One endpoint: its contract (validation, scope, OpenAPI) and its handler, declared once. */
export interface RouteDefinition<P = unknown, Q = unknown, B = unknown> {
  method: HttpMethod;
  /** Express path, e.g. `/v1/agent-computers/:id`. */
  path: string;
  operationId: string;
  summary: string;
  /** What the summary leaves out, for the OpenAPI document; the required scope is added to it. */
  description?: string;
  tag: string;
  scope: Scope;
  /**
   * Also served to a workspace's prompt token (docs/api.md#prompt-tokens), not only to API keys:
   * the context lake's reads, which the `agentry lake` client inside a workspace makes.
   */
  promptToken?: boolean;
  params?: z.ZodType<P>;
  query?: z.ZodType<Q>;
  body?: z.ZodType<B>;
  /**
   * A body the handler reads itself as a stream (multipart uploads): documented, never parsed here.
   * `schema` describes its fields for the OpenAPI document, as strictly as the handler reads them.
   */
  streamedBody?: { mediaType: string; schema: z.ZodType };
  /** Request headers the handler reads (Range, Last-Event-ID, …), for the document. */
  headers?: readonly HeaderSpec[];
  responses: Record<number, ResponseSpec>;
  /**
   * Served without Express's layer stack when it can be (api/direct-reads.ts): for cached reads whose
   * handler uses the params, query and principal only, under no prefix with middleware of its own.
   */
  direct?: boolean;
  handler: (input: RouteInput<P, Q, B>) => RouteResult | undefined | Promise<RouteResult | undefined>;
}

/** Keeps the handler's types tied to its schemas; the result is stored type-erased. */
export const defineRoute = <P, Q, B>(route: RouteDefinition<P, Q, B>): RouteDefinition =>
  route as unknown as RouteDefinition; // sound: handler only ever receives values parsed by these schemas

function parsePart<T>(schema: z.ZodType<T> | undefined, value: unknown, prefix: string | undefined): T {
  if (schema === undefined) return undefined as T; // the route declared no such part; the handler ignores it
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw ApiError.validation(parsed.error.issues, prefix);
  return parsed.data;
}

/** A request body: unknown fields are dropped and named in a `Warning` header (lenient-body.ts). */
function parseBody<T>(schema: z.ZodType<T> | undefined, value: unknown, res: Response): T {
  if (schema === undefined) return undefined as T; // the route takes no body; the handler ignores it
  const parsed = parseLenient(schema, value);
  if (!parsed.success) throw ApiError.validation(parsed.issues);
  if (parsed.ignored.length > 0) res.set('Warning', ignoredFieldsWarning(parsed.ignored));
  return parsed.data;
}

/**
 * What `res.json` does after serializing: the JSON content type unless one is set, then `res.send`,
 * here with the text's bytes and ETag, which a cached JsonText encodes and hashes only once.
 */
function sendJsonText(res: Response, body: JsonText): void {
  if (res.get('Content-Type') === undefined) res.setHeader('Content-Type', JSON_CONTENT_TYPE);
  res.setHeader('ETag', body.etag);
  res.send(body.bytes);
}

/** What Express makes of `application/json` (mime.contentType). */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** What a route answered, written to the response. */
function answer(res: Response, result: RouteResult | undefined): void {
  if (result === undefined) return;
  if (result.headers !== undefined) res.set(result.headers);
  if (result.body === undefined) res.status(result.status).end();
  else if (result.body instanceof JsonText) sendJsonText(res.status(result.status), result.body);
  else res.status(result.status).json(result.body);
}

/**
 * One route's Express handler: authorize, validate params, query and body, run, answer. A handler
 * that answers synchronously is answered synchronously (no promise made for it); Express turns a
 * throw or a rejection into the error response.
 */
function routeHandler(route: RouteDefinition): RouteHandler {
  return (req, res) => {
    const principal = principalOf(req);
    requirePromptTokenAllowed(principal, route.promptToken === true);
    requireScope(principal, route.scope);
    const params = parsePart(route.params, req.params, 'params');
    const query = parsePart(route.query, req.query, 'query');
    const body = parseBody(route.body, req.body ?? {}, res);
    const result = route.handler({ params, query, body, principal, req, res });
    if (result instanceof Promise)
      return result.then((answered) => {
        answer(res, answered);
      });
    answer(res, result);
    return undefined;
  };
}

/**
 * Mounts routes on a router, and in front of them their dispatch table (route-table.ts), which
 * hands a request straight to its route instead of letting Express try every route before it.
 * Returns that table, for the requests answered without Express (direct-reads.ts).
 */
export function mountRoutes(router: Router, routes: readonly RouteDefinition[]): RouteTable {
  const table = new RouteTable();
  router.use(table.dispatch);
  for (const route of routes) {
    const handler = routeHandler(route);
    const expressRoute = router.route(route.path);
    expressRoute[route.method](handler);
    table.add(route.method, route.path, expressRoute, handler, route.direct === true);
  }
  return table;
}
