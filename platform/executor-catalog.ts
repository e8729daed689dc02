import { z } from 'zod';
import { RELATIVE_WORKSPACE_PATH } from './agent-conventions.js';
import { readConfigFile } from './config-file.js';
import { parseDuration } from './duration.js';
import { ModelProviderSchema } from './model-gateway/providers.js';
import { ExecutorInvocationSchema } from './runner-protocol.js';
import type { ExecutorInvocation } from './runner-protocol.js';

/** An environment variable of an executor: a literal, or a key of a Secret in the organization's namespace. */
export const ExecutorEnvValueSchema = z.union([
  z.strictObject({ value: z.string() }),
  z.strictObject({
    secretKeyRef: z.strictObject({ name: z.string().min(1).max(253), key: z.string().min(1).max(253) }),
  }),
]);

const variableName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/);

/**
 * How an executor reaches one model provider through the model gateway (docs/model-gateway.md):
 * its key variables get the prompt's token, its base-URL variables the gateway's address, and the
 * gateway injects the real key, the value of the first key variable's `secretKeyRef`.
 */
export const ExecutorModelRouteSchema = z.strictObject({
  provider: ModelProviderSchema,
  keyVariables: z.array(variableName).min(1).max(4),
  baseUrlVariables: z.array(variableName).min(1).max(4),
});
export type ExecutorModelRoute = z.infer<typeof ExecutorModelRouteSchema>;

/**
 * One executor an installation offers (docs/api.md#tasks): how to start it and which models it takes.
 * Configured by the platform team (Helm values → a file named by AGENTRY_EXECUTORS_FILE); the
 * built-in definitions below apply where the file says nothing.
 */
export const ExecutorDefinitionSchema = z
  .strictObject({
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
    /** Where it reads project instructions; default by format (platform/agent-conventions.ts). */
    instructionsFile: z.string().regex(RELATIVE_WORKSPACE_PATH).optional(),
    /** Where it reads project skills; `null`: it has none; default by format. */
    skillsDir: z.string().regex(RELATIVE_WORKSPACE_PATH).nullable().optional(),
    /**
     * The providers it calls through the model gateway. Without routes (a custom executor that
     * declares none) its key variables are resolved into its environment as before: the key then
     * enters the workspace.
     */
    modelGateway: z.array(ExecutorModelRouteSchema).max(3).default([]),
  })
  .superRefine((definition, ctx) => {
    for (const route of definition.modelGateway) {
      const first = route.keyVariables[0] ?? '';
      const value = definition.env[first];
      if (value === undefined || !('secretKeyRef' in value))
        ctx.addIssue({
          code: 'custom',
          path: ['modelGateway'],
          message: `${route.provider}: key variable ${first} must be in env as a secretKeyRef (the key the gateway injects)`,
        });
    }
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
 *
 * The agent CLIs read the prompt from stdin: a prompt of up to 100,000 characters can exceed the
 * kernel's 128 KiB limit for one argument (multi-byte text does at ~43,000 characters), and stdin
 * also keeps the prompt out of the process list.
 */
export const BUILTIN_EXECUTOR_DEFINITIONS: readonly ExecutorDefinition[] = [
  builtin({
    name: 'claude',
    format: 'claude-stream-json',
    command: 'claude',
    // Claude Code headless mode: `-p` without a prompt argument reads the prompt from stdin;
    // `--output-format stream-json` requires `--verbose` with `-p`.
    args: [
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--dangerously-skip-permissions',
      '--model',
      '{model}',
    ],
    promptVia: 'stdin',
    env: {
      ANTHROPIC_API_KEY: { secretKeyRef: { name: 'agentry-executor-claude', key: 'ANTHROPIC_API_KEY' } },
      // Claude Code refuses --dangerously-skip-permissions as root unless told it runs in a sandbox,
      // which a workspace is (and workspace images often run as root).
      IS_SANDBOX: { value: '1' },
    },
    modelGateway: [
      {
        provider: 'anthropic',
        keyVariables: ['ANTHROPIC_API_KEY'],
        baseUrlVariables: ['ANTHROPIC_BASE_URL'],
      },
    ],
  }),
  builtin({
    name: 'codex',
    format: 'codex-json',
    command: 'codex',
    // `codex exec --json` prints one JSON event per line; the prompt `-` is read from stdin.
    args: [
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--dangerously-bypass-approvals-and-sandbox',
      '--model',
      '{model}',
      '-',
    ],
    promptVia: 'stdin',
    env: {
      // `codex exec` documents CODEX_API_KEY; older releases read OPENAI_API_KEY. Same secret for both.
      CODEX_API_KEY: { secretKeyRef: { name: 'agentry-executor-codex', key: 'OPENAI_API_KEY' } },
      OPENAI_API_KEY: { secretKeyRef: { name: 'agentry-executor-codex', key: 'OPENAI_API_KEY' } },
    },
    modelGateway: [
      {
        provider: 'openai',
        keyVariables: ['CODEX_API_KEY', 'OPENAI_API_KEY'],
        baseUrlVariables: ['OPENAI_BASE_URL'],
      },
    ],
  }),
  builtin({
    name: 'gemini',
    format: 'gemini-stream-json',
    command: 'gemini',
    // Headless because stdin is not a TTY; the piped text is the prompt. `--yolo` is deprecated in
    // favour of `--approval-mode yolo`.
    args: ['--output-format', 'stream-json', '--approval-mode', 'yolo', '--model', '{model}'],
    promptVia: 'stdin',
    env: {
      GEMINI_API_KEY: { secretKeyRef: { name: 'agentry-executor-gemini', key: 'GEMINI_API_KEY' } },
      // Headless runs in an untrusted folder exit when folder trust is enabled; a workspace is trusted.
      GEMINI_TRUST_WORKSPACE: { value: 'true' },
    },
    // @google/genai, which the Gemini CLI uses, reads GOOGLE_GEMINI_BASE_URL.
    modelGateway: [
      { provider: 'gemini', keyVariables: ['GEMINI_API_KEY'], baseUrlVariables: ['GOOGLE_GEMINI_BASE_URL'] },
    ],
  }),
  builtin({
    name: 'opencode',
    format: 'opencode-json',
    command: 'opencode',
    // `opencode run` appends piped stdin to the message; `--format json` prints raw events,
    // `--thinking` includes reasoning, and without `--dangerously-skip-permissions` every permission
    // that would be asked is rejected in a headless run. Models are `provider/model`.
    args: ['run', '--format', 'json', '--thinking', '--dangerously-skip-permissions', '--model', '{model}'],
    promptVia: 'stdin',
    // opencode's providers (the AI SDK's) read the same variables as the vendors' SDKs; the
    // Anthropic one expects /v1 in its base URL, which the gateway accepts with or without.
    env: {
      ANTHROPIC_API_KEY: { secretKeyRef: { name: 'agentry-executor-opencode', key: 'ANTHROPIC_API_KEY' } },
      OPENAI_API_KEY: { secretKeyRef: { name: 'agentry-executor-opencode', key: 'OPENAI_API_KEY' } },
    },
    modelGateway: [
      {
        provider: 'anthropic',
        keyVariables: ['ANTHROPIC_API_KEY'],
        baseUrlVariables: ['ANTHROPIC_BASE_URL'],
      },
      { provider: 'openai', keyVariables: ['OPENAI_API_KEY'], baseUrlVariables: ['OPENAI_BASE_URL'] },
    ],
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

/** What a definition needs to become an invocation: the task's model and the secrets, resolved. */
export interface InvocationInputs {
  /** The task's model; the definition's defaultModel when undefined. */
  model?: string | undefined;
  /** Resolved values of the definition's `secretKeyRef` variables (and any extra); literals come from the definition. */
  env?: Readonly<Record<string, string>>;
  /** Overrides the definition's timeout. */
  timeoutSeconds?: number;
}

/**
 * The invocation the runner receives for `definition`. A `secretKeyRef` variable missing from
 * `inputs.env` is left out (the CLI then reports its missing key itself) rather than guessed.
 */
export function invocationOf(
  definition: ExecutorDefinition,
  inputs: InvocationInputs = {},
): ExecutorInvocation {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(definition.env)) {
    if ('value' in value) env[name] = value.value;
  }
  const model = inputs.model ?? definition.defaultModel;
  return ExecutorInvocationSchema.parse({
    name: definition.name,
    format: definition.format,
    command: definition.command,
    args: [...definition.args],
    promptVia: definition.promptVia,
    env: { ...env, ...inputs.env },
    ...(model === undefined ? {} : { model }),
    timeoutSeconds: inputs.timeoutSeconds ?? Math.ceil(parseDuration(definition.timeout) / 1000),
  });
}

/** Reads AGENTRY_EXECUTORS_FILE (YAML or JSON `{ executors: [...] }`); no file means the built-ins. */
export async function loadExecutorCatalog(path: string | undefined): Promise<ExecutorCatalog> {
  if (path === undefined) return new ExecutorCatalog();
  return new ExecutorCatalog((await readConfigFile(path, ExecutorCatalogFileSchema, 'executors')).executors);
}
