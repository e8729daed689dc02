import { z } from 'zod';
import { DEFAULT_MAX_RESULT_BYTES } from '../platform/lake-protocol.js';
import { settingsError } from '../platform/config.js';
import { parseDuration } from '../platform/duration.js';
import type { Connector } from '../platform/lake-config/dataset-source.js';
import { FileRootsSetting } from '../platform/lake-config/file-roots.js';
import { defaultMemoryLimit, defaultThreads } from './resources.js';

const CONNECTORS = ['s3', 'https', 'file'] as const;

/** DuckDB's size syntax: `3GB`, `512MiB`, `1.5GB`. */
const SIZE = /^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i;

const duration = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      try {
        const ms = parseDuration(text);
        if (ms > 0) return ms;
      } catch {
        // reported below
      }
      ctx.addIssue({ code: 'custom', message: 'must be a positive duration such as 2m or 30s' });
      return z.NEVER;
    });

/** Every environment variable `agentry lake` reads, parsed once at start-up. */
export const LakeConfigSchema = z.object({
  /** The workload token; every request must carry it. Long, so that guessing it is hopeless. */
  AGENTRY_LAKE_TOKEN: z
    .string({ error: 'is required (the workload token, at least 32 characters)' })
    .min(32, { error: 'must be at least 32 characters' }),
  /** `0`: any free port (the process runtime reads the chosen one from the listening line). */
  AGENTRY_LAKE_PORT: z.coerce.number().int().min(0).max(65535).default(8710),
  AGENTRY_LAKE_HOST: z.string().min(1).default('0.0.0.0'),
  /** The database file (lake.duckdb, kept across restarts), downloads (staging) and DuckDB's spill files. */
  AGENTRY_LAKE_DATA_DIR: z.string().min(1).default('/var/lib/agentry-lake'),
  /** DuckDB memory_limit; default three quarters of the cgroup limit or of total memory. */
  AGENTRY_LAKE_MEMORY_LIMIT: z
    .string()
    .regex(SIZE, 'must be a size such as 3GB or 512MiB')
    .optional()
    .transform((value) => value ?? defaultMemoryLimit()),
  AGENTRY_LAKE_THREADS: z.coerce
    .number()
    .int()
    .min(1)
    .max(1024)
    .optional()
    .transform((value) => value ?? defaultThreads()),
  /**
   * Queries run at once; four times as many more wait, each until its timeout; beyond, 429 busy.
   * Unset: max(2, AGENTRY_LAKE_THREADS) (lake/query-admission.ts).
   */
  AGENTRY_LAKE_MAX_CONCURRENT_QUERIES: z.coerce.number().int().min(1).max(1024).optional(),
  /** DuckDB max_temp_directory_size: spill files may take this much of the disk; unset: DuckDB's 90% of free space. */
  AGENTRY_LAKE_SPILL_LIMIT: z.string().regex(SIZE, 'must be a size such as 5GB or 512MiB').optional(),
  /** Go duration; a query running longer is interrupted (504 timeout). */
  AGENTRY_LAKE_QUERY_TIMEOUT: duration('2m'),
  AGENTRY_LAKE_ROW_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  /** The connectors datasets may use; `file` only where the operator enables it (embedded default). */
  AGENTRY_LAKE_CONNECTORS: z
    .string()
    .default('s3,https')
    .transform((value) => value.split(',').map((name) => name.trim()))
    .pipe(z.array(z.enum(CONNECTORS)).min(1))
    .transform((names): ReadonlySet<Connector> => new Set(names)),
  /**
   * Directories `file://` datasets may read below, comma separated, compared after following
   * symbolic links; none by default (the embedded default gives each lake its organization's
   * lake-files directory).
   */
  AGENTRY_LAKE_FILE_ROOTS: FileRootsSetting,
  /** `true`: downloads (s3_endpoint, https datasets) may reach loopback and private addresses. */
  AGENTRY_LAKE_PRIVATE_TARGETS: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
  /** The largest SQL answer, in bytes of its rows' JSON; a larger one is refused (413 result_too_large). */
  AGENTRY_LAKE_MAX_RESULT_BYTES: z.coerce.number().int().min(1024).default(DEFAULT_MAX_RESULT_BYTES),
  AGENTRY_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});
export type LakeServerConfig = z.infer<typeof LakeConfigSchema>;

/**
 * Parses the lake server's environment; a bad value throws a ConfigError naming every problem.
 * Zod's messages never quote the value, so a malformed token does not end up on stderr.
 */
export function loadLakeConfig(env: NodeJS.ProcessEnv = process.env): LakeServerConfig {
  const parsed = LakeConfigSchema.safeParse(env);
  if (!parsed.success) throw settingsError('lake configuration', parsed.error);
  return parsed.data;
}
