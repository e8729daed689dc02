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

const matches = (template: PathTemplate, segments: readonly string[]): boolean =>
  template.segments.length === segments.length &&
  template.segments.every((literal, i) =>
    literal === undefined ? segments[i] !== '' : literal === segments[i],
  );

/** OpenAPI's rule: where two templates match, the one with a literal segment at the first difference wins. */
function moreSpecific(a: PathTemplate, b: PathTemplate): PathTemplate {
  for (const [i, literal] of a.segments.entries()) {
    const other = b.segments[i];
    if (literal !== undefined && other === undefined) return a;
    if (literal === undefined && other !== undefined) return b;
  }
  return a;
}

/**
 * A known path with a method it does not have (TRACE included) answers 405 with `Allow` and a JSON
 * error in the documented shape, instead of falling through to 404. Built from the OpenAPI
 * document's own paths, so the server and the document cannot disagree on what a path allows.
 * Paths the document does not know go on (to their routes, or to 404).
 */
export function methodNotAllowed(paths: Record<string, Record<string, unknown>>) {
  const templates = templatesOf(paths);
  return function checkMethod(req: Request, res: Response, next: NextFunction): void {
    const segments = req.path.split('/');
    const template = templates
      .filter((candidate) => matches(candidate, segments))
      .reduce<PathTemplate | undefined>(
        (best, candidate) => (best === undefined ? candidate : moreSpecific(best, candidate)),
        undefined,
      );
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
