// One load of bench:api-workers: autocannon (its CLI, a child process of its own, so its CPU is not
// the server's) on loopback, bounded by a duration and a number of connections.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { z } from 'zod';

const AutocannonResultSchema = z.object({
  duration: z.number(),
  errors: z.number(),
  timeouts: z.number(),
  non2xx: z.number(),
  latency: z.object({ p50: z.number(), p99: z.number() }),
  requests: z.object({ total: z.number() }),
});

export interface LoadResult {
  requests: number;
  seconds: number;
  p50Ms: number;
  p99Ms: number;
  /** Errors, timeouts and answers other than 2xx: a bench with any is not a measurement. */
  failures: number;
}

const autocannonCli = createRequire(import.meta.url).resolve('autocannon/autocannon.js');

/** `connections` keep-alive connections sending GET `url` with `headers` for `seconds`. */
export async function autocannon(options: {
  url: string;
  headers: Record<string, string>;
  connections: number;
  seconds: number;
}): Promise<LoadResult> {
  const headerArgs = Object.entries(options.headers).flatMap(([name, value]) => ['-H', `${name}=${value}`]);
  const args = [
    autocannonCli,
    '--json',
    '--connections',
    String(options.connections),
    '--duration',
    String(options.seconds),
    ...headerArgs,
    options.url,
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => (out += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`autocannon exited with ${String(code)}`);
  const result = AutocannonResultSchema.parse(JSON.parse(out));
  return {
    requests: result.requests.total,
    seconds: result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    failures: result.errors + result.timeouts + result.non2xx,
  };
}
