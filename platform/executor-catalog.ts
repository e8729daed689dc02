import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { parseDuration } from './duration.js';
import { ExecutorInvocationSchema } from './runner-protocol.js';

/** An environment variable of an executor: a literal, or a key of a Secret in the organization's namespace. */
export const ExecutorEnvValueSchema = z.union([
  z.strictObject({ value: z.string() }),
  z.strictObject({
    secretKeyRef: z.strictObject({ name: z.string().min(1).max(253), key: z.string().min(1).max(253) }),
  }),
]);

/**
 * One executor an installation offers (CONTRACT.md §3): how to start it and which models it takes.
 * Configured by the platform team (Helm values → a file named by AGENTRY_EXECUTORS_FILE); the
 * built-in definitions below apply where the file says nothing.
 */
export const ExecutorDefinitionSchema = z.strictObject({
  name: z
    .string()
    .min(1)
    .max(63)
    .regex(/^[a-z][a-z0-9-]*$/),
  format: ExecutorInvocationSchema.shape.format,
  command: z.string().min(1),
  args: z.array(z.string()),
  promptVia: ExecutorInvocationSchema.shape.promptVia.default('argument'),
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), ExecutorEnvValueSchema).default({}),
  /** When set, a task's `model` must be one of these (else 400). */
  models: z.array(z.string().min(1).max(200)).optional(),
  defaultModel: z.string().min(1).max(200).optional(),
  /** A Go duration, e.g. `1h`: the prompt fails and its processes are killed after this long. */
  timeout: z
    .string()
    .refine((text) => {
      try {
        return parseDuration(text) >= 1000;
      } catch {
        return false;
      }
    }, 'must be a duration of at least 1s, e.g. "30m"')
    .default('1h'),
});
export type ExecutorDefinition = z.output<typeof ExecutorDefinitionSchema>;

export const ExecutorCatalogFileSchema = z.strictObject({
  executors: z.array(ExecutorDefinitionSchema).max(64),
});

const builtin = (definition: z.input<typeof ExecutorDefinitionSchema>): ExecutorDefinition =>
  ExecutorDefinitionSchema.parse(definition);

/**
 * The executors every installation knows, written from each CLI's public documentation. Agents run
 * inside a disposable workspace VM or pod, so they are allowed to act without asking.
 */
export const BUILTIN_EXECUTOR_DEFINITIONS: readonly ExecutorDefinition[] = [
  builtin({
    name: 'claude',
    format: 'claude-stream-json',
    command: 'claude',
    // Claude Code headless mode: -p, --output-format stream-json (needs --verbose), --model.
    args: [
      '-p',
      '{prompt}',
      '--output-format',
      'stream-json',
      '--verbose',
      '--dangerously-skip-permissions',
      '--model',
      '{model}',
    ],
    env: {
      ANTHROPIC_API_KEY: { secretKeyRef: { name: 'agentry-executor-claude', key: 'ANTHROPIC_API_KEY' } },
    },
  }),
  builtin({
    name: 'codex',
    format: 'codex-json',
    command: 'codex',
    // `codex exec --json` prints one JSON event per line.
    args: [
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--dangerously-bypass-approvals-and-sandbox',
      '--model',
      '{model}',
      '{prompt}',
    ],
    env: { OPENAI_API_KEY: { secretKeyRef: { name: 'agentry-executor-codex', key: 'OPENAI_API_KEY' } } },
  }),
  builtin({
    name: 'gemini',
    format: 'gemini-stream-json',
    command: 'gemini',
    args: ['-p', '{prompt}', '--output-format', 'stream-json', '--yolo', '--model', '{model}'],
    env: { GEMINI_API_KEY: { secretKeyRef: { name: 'agentry-executor-gemini', key: 'GEMINI_API_KEY' } } },
  }),
  builtin({
    name: 'opencode',
    format: 'opencode-json',
    command: 'opencode',
    args: ['run', '--format', 'json', '--model', '{model}', '{prompt}'],
  }),
  builtin({
    name: 'shell',
    format: 'lines',
    command: 'bash',
    // A file, not `-c`: a 100,000-character prompt can exceed the kernel's 128 KiB per-argument limit.
    args: ['{promptFile}'],
    promptVia: 'file',
  }),
];

/** The executors of an installation by name: the built-ins, replaced or extended by configuration. */
export class ExecutorCatalog {
  private readonly byName: ReadonlyMap<string, ExecutorDefinition>;

  constructor(configured: readonly ExecutorDefinition[] = []) {
    const byName = new Map(BUILTIN_EXECUTOR_DEFINITIONS.map((d) => [d.name, d]));
    for (const definition of configured) byName.set(definition.name, definition);
    this.byName = byName;
  }

  get(name: string): ExecutorDefinition | undefined {
    return this.byName.get(name);
  }

  names(): string[] {
    return [...this.byName.keys()].sort();
  }

  /** Why `model` cannot be used with `executor`, or undefined when it can. */
  modelProblem(executor: string, model: string | undefined): string | undefined {
    const definition = this.byName.get(executor);
    if (definition === undefined) return `unknown executor "${executor}"; known: ${this.names().join(', ')}`;
    if (model === undefined || definition.models === undefined) return undefined;
    return definition.models.includes(model)
      ? undefined
      : `model "${model}" is not offered by ${executor}; offered: ${definition.models.join(', ')}`;
  }
}

/** Reads AGENTRY_EXECUTORS_FILE (YAML or JSON `{ executors: [...] }`); no file means the built-ins. */
export async function loadExecutorCatalog(path: string | undefined): Promise<ExecutorCatalog> {
  if (path === undefined) return new ExecutorCatalog();
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read the executors file ${path}`, { cause: err });
  }
  const parsed = ExecutorCatalogFileSchema.safeParse(parseYaml(text));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid executors file ${path}:\n  ${problems.join('\n  ')}`);
  }
  return new ExecutorCatalog(parsed.data.executors);
}
