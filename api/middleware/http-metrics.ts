import { Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Request duration by method, route template and status. The route label is the template
 * (`/v1/agent-computers/:id`), never the URL, so its values stay few.
 */
export function httpMetrics(options: { registry: Registry }): RequestHandler {
  const duration = new Histogram({
    name: 'agentry_http_request_duration_seconds',
    help: 'HTTP request duration by method, route template and status code',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 180],
    registers: [options.registry],
  });
  return function recordRequestDuration(req: Request, res: Response, next: NextFunction): void {
    // What prom-client's startTimer measures, without its closure and label merge per request.
    const started = performance.now();
    res.once('finish', () => {
      const template: unknown = (req.route as { path?: unknown } | undefined)?.path;
      const route = typeof template === 'string' ? template : 'unmatched';
      duration.observe(
        { method: req.method, route, status: String(res.statusCode) },
        (performance.now() - started) / 1000,
      );
    });
    next();
  };
}
