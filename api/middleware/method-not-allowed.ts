import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../errors.js';

/** One path of the OpenAPI document: its segments (undefined for a `{parameter}`) and its methods. */
interface PathTemplate {
  segments: readonly (string | undefined)[];
  methods: readonly string[];
}

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

function templatesOf(paths: Record<string, Record<string, unknown>>): PathTemplate[] {
  return Object.entries(paths).map(([path, operations]) => {
    const methods = Object.keys(operations)
      .filter((key) => HTTP_METHODS.has(key))
      .map((method) => method.toUpperCase());
    // Express answers HEAD for every GET route.
    if (methods.includes('GET') && !methods.includes('HEAD')) methods.push('HEAD');
    return {
      segments: path.split('/').map((segment) => (/^\{[^}]+\}$/.test(segment) ? undefined : segment)),
      methods: methods.sort(),
    };
  });
}

/** Whether a path's segments fit a template of as many segments. */
function matches(template: PathTemplate, segments: readonly string[]): boolean {
  for (let i = 0; i < segments.length; i++) {
    const literal = template.segments[i];
    if (literal === undefined ? segments[i] === '' : literal !== segments[i]) return false;
  }
  return true;
}

/** The templates by their number of segments: a path is compared with those of its own length only. */
function bySegmentCount(templates: readonly PathTemplate[]): Map<number, PathTemplate[]> {
  const groups = new Map<number, PathTemplate[]>();
  for (const template of templates) {
    const group = groups.get(template.segments.length) ?? [];
    group.push(template);
    groups.set(template.segments.length, group);
  }
  return groups;
}

/** OpenAPI's rule: where two templates match, the one with a literal segment at the first difference wins. */
function moreSpecific(a: PathTemplate, b: PathTemplate): PathTemplate {
  for (const [i, literal] of a.segments.entries()) {
    const other = b.segments[i];
    if (literal !== undefined && other === undefined) return a;
    if (literal === undefined && other !== undefined) return b;
  }
  return a;
}

/** The most specific template a path fits, if any (see moreSpecific). */
function templateOf(
  groups: ReadonlyMap<number, readonly PathTemplate[]>,
  path: string,
): PathTemplate | undefined {
  const segments = path.split('/');
  let best: PathTemplate | undefined;
  for (const candidate of groups.get(segments.length) ?? []) {
    if (matches(candidate, segments)) best = best === undefined ? candidate : moreSpecific(best, candidate);
  }
  return best;
}

/**
 * A known path with a method it does not have (TRACE included) answers 405 with `Allow` and a JSON
 * error in the documented shape, instead of falling through to 404. Built from the OpenAPI
 * document's own paths, so the server and the document cannot disagree on what a path allows.
 * Paths the document does not know go on (to their routes, or to 404).
 */
export function methodNotAllowed(paths: Record<string, Record<string, unknown>>) {
  const groups = bySegmentCount(templatesOf(paths));
  return function checkMethod(req: Request, res: Response, next: NextFunction): void {
    const template = templateOf(groups, req.path);
    if (template === undefined || template.methods.includes(req.method)) {
      next();
      return;
    }
    res.set('Allow', template.methods.join(', '));
    next(
      new ApiError(
        'method_not_allowed',
        `${req.method} is not allowed here; allowed: ${template.methods.join(', ')}`,
      ),
    );
  };
}
