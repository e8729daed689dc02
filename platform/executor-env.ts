import { z } from 'zod';

/**
 * Environment variables clients give an executor (PATCH /agent-computers/:id `env`, POST /tasks
 * `env`): POSIX names, bounded sizes, and never one the runner or the shell depends on. Values live
 * only in Secrets; resources and responses carry the names.
 */

/** POSIX portable names: letters, digits and underscores, not starting with a digit. */
const POSIX_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Variables the runner, the dynamic linker or the shell rely on: a client cannot set them. */
const RESERVED_NAMES = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'PWD',
  'OLDPWD',
  'TMPDIR',
  'IFS',
  'ENV',
  'BASH_ENV',
  'SHELLOPTS',
  'BASHOPTS',
  'PS4',
  'NODE_OPTIONS',
  'GIT_DIR',
  'GIT_WORK_TREE',
  // The egress proxy's settings with the prompt token (docs/egress.md): a client cannot route around it.
  'HTTPS_PROXY',
  'HTTP_PROXY',
  'NO_PROXY',
  'ALL_PROXY',
]);
/** Prefixes reserved as a whole: Agentry's own settings and the loaders' injection hooks. */
const RESERVED_PREFIXES = ['AGENTRY_', 'LD_', 'DYLD_', 'BASH_FUNC_'];

export const MAX_ENV_VARIABLES = 100;
export const MAX_ENV_VALUE_BYTES = 32 * 1024;
export const MAX_ENV_TOTAL_BYTES = 128 * 1024;

/** Why `name` cannot be given to an executor, or undefined when it can. */
export function envNameProblem(name: string): string | undefined {
  if (name.length > 128) return 'must be at most 128 characters';
  if (!POSIX_NAME.test(name))
    return 'must be a POSIX name (letters, digits and _, not starting with a digit)';
  const upper = name.toUpperCase();
  if (RESERVED_NAMES.has(upper) || RESERVED_PREFIXES.some((prefix) => upper.startsWith(prefix)))
    return 'is reserved for the workspace itself';
  return undefined;
}

const envName = z.string().superRefine((name, ctx) => {
  const problem = envNameProblem(name);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: `${name}: ${problem}` });
});

/** A client's environment map, names and sizes checked; values are never echoed in messages. */
export const ExecutorEnvSchema = z
  .record(
    envName,
    z.string().refine((value) => !value.includes('\0'), 'must not contain NUL'),
  )
  .superRefine((env, ctx) => {
    const entries = Object.entries(env);
    if (entries.length > MAX_ENV_VARIABLES)
      ctx.addIssue({ code: 'custom', message: `at most ${MAX_ENV_VARIABLES} variables` });
    let total = 0;
    for (const [name, value] of entries) {
      const bytes = Buffer.byteLength(value, 'utf8');
      total += bytes + Buffer.byteLength(name, 'utf8');
      if (bytes > MAX_ENV_VALUE_BYTES)
        ctx.addIssue({ code: 'custom', path: [name], message: `at most ${MAX_ENV_VALUE_BYTES} bytes` });
    }
    if (total > MAX_ENV_TOTAL_BYTES)
      ctx.addIssue({ code: 'custom', message: `at most ${MAX_ENV_TOTAL_BYTES} bytes in all` });
  });
export type ExecutorEnv = z.infer<typeof ExecutorEnvSchema>;
