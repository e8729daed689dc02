import { z } from 'zod';
import { settingsError } from '../platform/config.js';

/** Every environment variable `agentry runner` reads, parsed once at start-up. */
export const RunnerConfigSchema = z.object({
  /** The workload token; every request must carry it. Long, so that guessing it is hopeless. */
  AGENTRY_RUNNER_TOKEN: z
    .string({ error: 'is required (the workload token, at least 32 characters)' })
    .min(32, { error: 'must be at least 32 characters' }),
  /** `0`: any free port (the process runtime reads the chosen one from the listening line). */
  AGENTRY_RUNNER_PORT: z.coerce.number().int().min(0).max(65535).default(8700),
  /** All interfaces by default: in a VM or pod the operator and API server reach it from outside. */
  AGENTRY_RUNNER_HOST: z.string().min(1).default('0.0.0.0'),
  AGENTRY_RUNNER_WORKDIR: z.string().min(1).default('/code'),
  /**
   * The working directory as events name it (the `cwd` of `init`): the process runtime runs the
   * runner in a directory of the server's data directory, whose path must not reach API clients or
   * share links; they see the workspace's `/code`. Default: AGENTRY_RUNNER_WORKDIR.
   */
  AGENTRY_RUNNER_WORKDIR_SHOWN: z.string().min(1).optional(),
  /**
   * The runner's own state: each task's event log and prompt records. It must be on the workspace's
   * persistent disk (like the workdir), or a hibernated workspace forgets its tasks' history.
   */
  AGENTRY_RUNNER_STATE_DIR: z.string().min(1).default('/var/lib/agentry-runner'),
  /**
   * `true`: before it listens, a runner that has never run a prompt runs a throw-away one through
   * its own prompt path (runner/warm-up.ts), so that its first real prompt is as fast as a later
   * one. The operator sets it for warm-pool members, whose start nobody waits for.
   */
  AGENTRY_RUNNER_WARM_UP: z.enum(['true', 'false']).default('false'),
  AGENTRY_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});
export type RunnerConfig = z.infer<typeof RunnerConfigSchema>;

/**
 * Parses the runner's environment; a bad value throws a ConfigError naming every problem. Zod's
 * messages never quote the value, so a malformed token does not end up on stderr.
 */
export function loadRunnerConfig(env: NodeJS.ProcessEnv = process.env): RunnerConfig {
  const parsed = RunnerConfigSchema.safeParse(env);
  if (!parsed.success) throw settingsError('runner configuration', parsed.error);
  return parsed.data;
}
