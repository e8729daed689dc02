// One measurement of bench:api: the load child against a URL, and this process's CPU meanwhile.
import { spawnLines } from '../support/child.js';
import { z } from 'zod';

const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? '3000');
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? '8');

const LoadResultSchema = z.object({
  requests: z.number(),
  elapsedMs: z.number(),
  p50: z.number(),
  p99: z.number(),
});

export interface LoadFigures {
  /** User + system CPU of this process (the server) per answered request. */
  cpuUsPerRequest: number;
  requestsPerSecond: number;
  p99Ms: number;
}

/** Runs load.ts against `url` and reads this process's CPU from its `start` line to its result. */
export async function measureLoad(url: string, key: string): Promise<LoadFigures> {
  let startCpu: NodeJS.CpuUsage | undefined;
  let figures: LoadFigures | undefined;
  await spawnLines(
    process.execPath,
    ['--import', './test/support/register-swc.mjs', 'bench/api-cpu/load.ts'],
    (line) => {
      if (line === 'start') {
        startCpu = process.cpuUsage();
        return undefined;
      }
      if (startCpu === undefined || line.trim() === '') return undefined;
      const spent = process.cpuUsage(startCpu);
      const result = LoadResultSchema.parse(JSON.parse(line));
      figures = {
        cpuUsPerRequest: (spent.user + spent.system) / result.requests,
        requestsPerSecond: (result.requests / result.elapsedMs) * 1000,
        p99Ms: result.p99,
      };
      return 'stop';
    },
    {
      env: {
        ...process.env,
        LOAD_URL: url,
        LOAD_KEY: key,
        LOAD_CONCURRENCY: String(CONCURRENCY),
        LOAD_DURATION_MS: String(DURATION_MS),
      },
    },
  );
  if (figures === undefined) throw new Error('the load generator printed no result');
  return figures;
}
