import { z } from 'zod';
import { objectName } from '../crds/meta.js';

/**
 * The runner's HTTP protocol, spoken by the operator (dispatch, cancel, follow) and the API server
 * (read events). The runner imports it too; it is the only contract between them (docs/architecture.md#programs).
 *
 * Routes (all behind `Authorization: Bearer <workload token>`):
 * - PUT  /v1/tasks/:taskId/prompts/:promptId          DispatchPromptRequest → 201 (new) / 200 (known) PromptState
 * - GET  /v1/tasks/:taskId/prompts/:promptId          → PromptState, 404 when never dispatched
 * - POST /v1/tasks/:taskId/prompts/:promptId/cancel   → PromptState (terminal); 404 when never dispatched
 * - GET  /v1/tasks/:taskId/events?after=N&promptId=P  → SSE (`Accept: text/event-stream`) or EventsPage JSON
 *   The SSE stream sends `id: <seq>`, `event: event`, `data: <TaskEvent>` and `: keepalive` every 15 s;
 *   it never ends by itself (the runner cannot know whether more prompts will come).
 * - GET  /v1/ports                                    → ListeningPorts (the API's preview proxy asks)
 */

/** docs/api.md#tasks event types. */
/**
 * How long an idle connection to a runner stays open (the runner's server keep-alive). Announced in
 * every answer's `Keep-Alive` header, which Node's fetch honours (up to 10 minutes): the operator
 * keeps its connection to a warm-pool member's runner open by asking it something more often than
 * this (operator/agent-computer/runner-connections.ts), so the first prompt after a claim needs no
 * name lookup and no new connection, as a later prompt does not. Node's default is 5 s.
 */
export const RUNNER_KEEP_ALIVE_MS = 300_000;

export const EventTypeSchema = z.enum([
  'init',
  'thinking',
  'text',
  'tool_use',
  'tool_result',
  'result',
  'error',
  'status',
  'warning',
]);
export type EventType = z.infer<typeof EventTypeSchema>;

/** Prompt statuses as the runner and the Task status know them (docs/api.md#tasks). */
export const RunnerPromptStatusSchema = z.enum(['pending', 'running', 'succeeded', 'failed', 'canceled']);
export type RunnerPromptStatus = z.infer<typeof RunnerPromptStatusSchema>;

export const TERMINAL_PROMPT_STATUSES: readonly RunnerPromptStatus[] = ['succeeded', 'failed', 'canceled'];
export const isTerminalPromptStatus = (status: RunnerPromptStatus): boolean =>
  TERMINAL_PROMPT_STATUSES.includes(status);

/** Payload of each event type (docs/api.md#tasks). Unknown keys are kept: executors may add detail. */
export const EventPayloadSchemas = {
  init: z.looseObject({ cwd: z.string(), executor: z.string(), model: z.string().nullable() }),
  thinking: z.looseObject({ content: z.string() }),
  text: z.looseObject({ content: z.string() }),
  tool_use: z.looseObject({ id: z.string(), name: z.string(), input: z.unknown() }),
  tool_result: z.looseObject({ id: z.string(), output: z.unknown(), isError: z.boolean() }),
  result: z.looseObject({ result: z.string(), usage: z.record(z.string(), z.unknown()).optional() }),
  error: z.looseObject({ message: z.string() }),
  status: z.looseObject({ status: RunnerPromptStatusSchema, error: z.string().optional() }),
  /** Something the client asked for was skipped, but the prompt runs (an unknown skill, say). */
  warning: z.looseObject({ message: z.string(), code: z.string().optional() }),
} as const satisfies Record<EventType, z.ZodType>;

/** One event of a task's append-only log: `seq` starts at 0 per task and never repeats. */
export const TaskEventSchema = z.object({
  seq: z.number().int().min(0),
  timestamp: z.string(),
  promptId: z.string(),
  eventType: EventTypeSchema,
  payload: z.record(z.string(), z.unknown()),
});
export type TaskEvent = z.infer<typeof TaskEventSchema>;

/** How an executor is started: resolved by the operator from its catalog, secrets included. */
export const ExecutorInvocationSchema = z.object({
  name: z.string().min(1).max(63),
  /** How its output is read: see runner/executors/. */
  format: z.enum(['claude-stream-json', 'codex-json', 'gemini-stream-json', 'opencode-json', 'lines']),
  command: z.string().min(1),
  /** `{prompt}`, `{model}` and `{promptFile}` are replaced; an argument naming `{model}` is dropped with its flag when no model is set. */
  args: z.array(z.string()),
  /** `argument`: in args as `{prompt}`; `stdin`: written to its stdin; `file`: `{promptFile}` names a file holding it. */
  promptVia: z.enum(['argument', 'stdin', 'file']),
  /** Environment values, secrets already resolved (never logged, never written to the event log). */
  env: z.record(z.string(), z.string()),
  model: z.string().max(200).optional(),
  /** The prompt is failed and its process group killed after this long. */
  timeoutSeconds: z
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 3600),
  /** Where this executor reads project instructions, relative to the working directory. */
  instructionsFile: z.string().max(255).optional(),
  /** Where it reads project skills (`<skillsDir>/<name>/SKILL.md`); absent: it has none. */
  skillsDir: z.string().max(255).optional(),
});
export type ExecutorInvocation = z.infer<typeof ExecutorInvocationSchema>;

/** A file to place at /code/<filename> before the prompt runs, fetched from a signed URL. */
export const PromptInputFileSchema = z.object({
  filename: z.string().min(1).max(1024),
  url: z.url(),
});

/** A skill name as a directory: the Agent Skills naming rule, a little wider (dots, underscores). */
export const SkillNameSchema = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/);

/**
 * Where one requested skill comes from, resolved by the operator: a git repository (cloned by the
 * runner with the SSRF guard; `path` is the skill's directory inside it) or a directory on the
 * workspace's own disk (part of the runner image). Neither: the installation does not know it.
 */
export const SkillSourceSchema = z.strictObject({
  /** As the client named it: a catalog slug or a `github:` reference. */
  slug: z.string().min(1).max(2048),
  name: SkillNameSchema,
  git: z
    .strictObject({
      url: z.string().min(1).max(2048),
      ref: z.string().min(1).max(255).optional(),
      path: z.string().min(1).max(1024).optional(),
    })
    .optional(),
  directory: z.string().min(1).max(4096).optional(),
});
export type SkillSource = z.infer<typeof SkillSourceSchema>;

export const DispatchPromptRequestSchema = z.strictObject({
  text: z.string().min(1).max(100_000),
  executor: ExecutorInvocationSchema,
  files: z.array(PromptInputFileSchema).max(100).default([]),
  skills: z.array(z.string()).max(100).default([]),
  /** One entry per skill in `skills`, in order; an entry without git or directory is unknown here. */
  skillSources: z.array(SkillSourceSchema).max(100).default([]),
  /** Skills may be fetched from loopback and private addresses, and over plain http. */
  allowPrivateSkillSources: z.boolean().default(false),
  /** The workspace's agent instructions; absent: any section Agentry wrote before is removed. */
  agentInstructions: z.string().max(100_000).optional(),
  /** Cloned into the working directory before the first prompt that names it (once per repository). */
  githubUrl: z.string().max(2048).optional(),
  branch: z.string().max(255).optional(),
  /** The model gateway (docs/adr/0009): the runner asks it for the prompt's metered usage with this token. */
  modelGateway: z.strictObject({ url: z.url(), token: z.string().min(1).max(4096) }).optional(),
});
export type DispatchPromptRequest = z.input<typeof DispatchPromptRequestSchema>;
export type DispatchPrompt = z.output<typeof DispatchPromptRequestSchema>;

/** What the runner knows of one prompt. */
export const PromptStateSchema = z.object({
  taskId: z.string(),
  promptId: z.string(),
  status: RunnerPromptStatusSchema,
  acceptedAt: z.string(),
  startedAt: z.string().optional(),
  completedAt: z.string().optional(),
  /** seq of the last event of this prompt so far (-1 before its first). */
  lastSeq: z.number().int().min(-1),
  finalResult: z.string().optional(),
  error: z.string().optional(),
});
export type PromptState = z.infer<typeof PromptStateSchema>;

/** GET events as JSON: every event after `after` (optionally of one prompt), and the task's last seq. */
export const EventsPageSchema = z.object({
  events: z.array(TaskEventSchema),
  /** The task's highest seq so far (-1 when it has none). */
  lastSeq: z.number().int().min(-1),
});
export type EventsPage = z.infer<typeof EventsPageSchema>;

/** Task and prompt ids in runner paths: UUIDs, so they are also safe directory names. */
export const RunnerIdSchema = z.uuid();

/**
 * A task id in runner paths: the Task's name, a UUID when the API made it, a Kubernetes name
 * (`my-task`) when kubectl did; a safe directory name either way.
 */
export const RunnerTaskIdSchema = objectName;

/*
 * Artifact sync (docs/architecture.md#the-life-of-a-task step 4; issue 7). The operator, not the runner, moves the bytes between
 * the workspace and object storage: the runner holds no credentials and its NetworkPolicy may keep it
 * from reaching an in-cluster object store. Routes (same token):
 * - GET    /v1/artifacts                → ArtifactManifest (files under /code/artifacts and the sync base)
 * - GET    /v1/artifacts/<path>         → the bytes (404 when missing or not a regular file)
 * - PUT    /v1/artifacts/<path>         body: the bytes (optional `content-md5`, base64) → ArtifactFile
 * - DELETE /v1/artifacts/<path>         → 204 (also when it did not exist)
 * - PUT    /v1/artifacts-base           ArtifactBaseRequest → 204
 * `<path>` is the artifact's relative path, each segment URL-encoded.
 */

/** One regular file under the artifacts directory. */
export const ArtifactFileSchema = z.object({
  path: z.string().min(1).max(1024),
  size: z.number().int().min(0),
  /** Hex MD5 of the content. */
  md5: z.string().regex(/^[0-9a-f]{32}$/),
});
export type ArtifactFile = z.infer<typeof ArtifactFileSchema>;

/**
 * What both sides held of one path at the last sync: the workspace's content (`md5`) and the
 * store's object (`etag`, unquoted). Both are kept because an S3 multipart upload's ETag is not an
 * MD5, so the two sides cannot be compared with one number.
 */
export const ArtifactBaseEntrySchema = z.object({
  md5: z.string().regex(/^[0-9a-f]{32}$/),
  etag: z.string().min(1).max(200),
});
export type ArtifactBaseEntry = z.infer<typeof ArtifactBaseEntrySchema>;

export const ArtifactBaseSchema = z.record(z.string().min(1).max(1024), ArtifactBaseEntrySchema);
export type ArtifactBase = z.infer<typeof ArtifactBaseSchema>;

export const ArtifactManifestSchema = z.object({
  files: z.array(ArtifactFileSchema),
  base: ArtifactBaseSchema,
});
export type ArtifactManifest = z.infer<typeof ArtifactManifestSchema>;

export const ArtifactBaseRequestSchema = z.strictObject({ base: ArtifactBaseSchema });

/**
 * GET /v1/ports: the TCP ports processes of this workspace listen on (the runner's own left out).
 * The API's preview proxy forwards only to these: in the process runtime workspaces share the
 * host's network, so another port on the same address may belong to someone else.
 */
export const ListeningPortsSchema = z.object({ ports: z.array(z.number().int().min(1).max(65535)) });
export type ListeningPorts = z.infer<typeof ListeningPortsSchema>;
