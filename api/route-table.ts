import type { NextFunction, Request, Response } from 'express';

/**
 * A dispatch table for the routes of one Express router: a request whose method and path one of
 * them takes is handed straight to it, where Express would try each route's regular expression in
 * turn (the API has ~60; a read of a task went through 20 of them). Express's own matching rules
 * are kept: routes in the order they were added, the first that takes the method wins (HEAD goes
 * to GET routes), literal segments match in any ASCII letter case, one trailing slash is allowed,
 * a parameter is one non-empty segment, percent-decoded. Whatever the table does not take — a
 * route template it does not understand, an undecodable parameter, OPTIONS — goes on to the same
 * routes mounted on the router as usual, so Express answers it exactly as before. The route tests
 * compare the two (test/unit/route-table.test.ts).
 */

/** A route's handler: it answers, or throws or rejects for Express's error handling. */
export type RouteHandler = (req: Request, res: Response) => Promise<void> | undefined;

/** A literal segment (ASCII lower case) or a parameter's name. */
type Segment = { literal: string } | { param: string };

interface Entry {
  /** The route's path as added, e.g. `/v1/tasks/:id`. */
  template: string;
  segments: readonly Segment[];
  /** The Express route object the same handler is mounted on (`req.route`, e.g. for the metrics' label). */
  route: object;
  handler: RouteHandler;
  /** Whether the route may be served without Express's layer stack (direct-reads.ts). */
  direct: boolean;
}

/** The route a request goes to, and its parameters. */
export type RouteMatch = Omit<Entry, 'segments'> & { params: Record<string, string> };

const LITERAL = /^[A-Za-z0-9_.~-]*$/;
const PARAM = /^:([A-Za-z_$][A-Za-z0-9_$]*)$/;

/** A template's segments, or undefined for one with more than literals and whole-segment parameters. */
function compile(template: string): Segment[] | undefined {
  const segments: Segment[] = [];
  for (const part of template.split('/')) {
    const param = PARAM.exec(part)?.[1];
    if (param !== undefined) segments.push({ param });
    else if (LITERAL.test(part)) segments.push({ literal: part.toLowerCase() });
    else return undefined;
  }
  return segments;
}

/** Whether a path segment equals a lower-case literal, ASCII letters in any case (a RegExp's `i` without `u`). */
function literalMatches(segment: string, literal: string): boolean {
  if (segment === literal) return true;
  if (segment.length !== literal.length) return false;
  for (let i = 0; i < segment.length; i++) {
    const code = segment.charCodeAt(i);
    const folded = code >= 65 && code <= 90 ? code + 32 : code;
    if (folded !== literal.charCodeAt(i)) return false;
  }
  return true;
}

/** A parameter as Express's router decodes it; undefined when it cannot be decoded. */
function decodeParam(value: string): string | undefined {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

/** Express fails a request whose matching route's parameter cannot be decoded: the table leaves it to Express. */
const UNDECODABLE = Symbol('undecodable');

/** The parameters of a path for a template, undefined when it does not match. */
function matchParams(
  segments: readonly Segment[],
  parts: readonly string[],
): Record<string, string> | undefined | typeof UNDECODABLE {
  if (segments.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    const part = parts[i] ?? '';
    if (segment === undefined) return undefined;
    if ('literal' in segment) {
      if (!literalMatches(part, segment.literal)) return undefined;
    } else {
      if (part === '') return undefined;
      const value = decodeParam(part);
      if (value === undefined) return UNDECODABLE;
      params[segment.param] = value;
    }
  }
  return params;
}

/** A path's segments, one trailing slash dropped as Express's non-strict routing does. */
function pathParts(path: string): string[] {
  const parts = path.split('/');
  if (parts.length > 2 && parts.at(-1) === '') parts.pop();
  return parts;
}

export class RouteTable {
  /** By upper-case method; each list in the order the routes were added. */
  private readonly byMethod = new Map<string, Entry[]>();
  /** Set once a template is not understood: later routes could be shadowed by it, so none is added. */
  private closed = false;

  /** Adds a route; `route` is the Express route the handler is mounted on too. */
  add(method: string, template: string, route: object, handler: RouteHandler, direct = false): void {
    const segments = this.closed ? undefined : compile(template);
    if (segments === undefined) {
      this.closed = true;
      return;
    }
    const key = method.toUpperCase();
    const entries = this.byMethod.get(key) ?? [];
    entries.push({ template, segments, route, handler, direct });
    this.byMethod.set(key, entries);
  }

  /** The route the table hands a request of `method` for `path` to; undefined: Express decides. */
  find(method: string, path: string): RouteMatch | undefined {
    const entries = this.byMethod.get(method === 'HEAD' ? 'GET' : method) ?? [];
    const parts = entries.length === 0 ? [] : pathParts(path);
    for (const { segments, ...entry } of entries) {
      const params = matchParams(segments, parts);
      if (params === undefined) continue;
      if (params === UNDECODABLE) return undefined;
      return { ...entry, params };
    }
    return undefined;
  }

  /** The middleware to mount before the routes themselves. */
  readonly dispatch = (req: Request, res: Response, next: NextFunction): Promise<void> | undefined => {
    const match = this.find(req.method, req.path);
    if (match === undefined) {
      next();
      return undefined;
    }
    req.params = match.params;
    req.route = match.route;
    return match.handler(req, res);
  };
}
