import { randomUUID } from 'node:crypto';
import { AgentComputerType, TaskSpecSchema, TaskType, apiVersionOf } from '../../crds/index.js';
import type { AgentComputer, PromptSpec, Task } from '../../crds/index.js';
import { isStoreError } from '../../platform/store/types.js';
import type { Logger } from '../../platform/log.js';
import type { Principal } from '../auth/principal.js';
import type { TaskRoutesDeps } from './access.js';
import { findWorkspace } from '../agent-computer/find-workspace.js';
import { checkExecutor } from './executor-policy.js';
import { createAgentComputer } from '../agent-computer/create.js';
import { assertTaskSlot } from './limits.js';
import { cloneUrlOf } from './schemas.js';
import { adoptTaskEnvSecret, createTaskEnvSecret, removeTaskEnvSecret } from './env.js';
import type { AddPromptBody, CreateTaskBody } from './schemas.js';

/** Tasks carry the name of their workspace here, so the operator and kubectl can select by it. */
export const WORKSPACE_LABEL = 'agentry.dev/workspace';
const TITLE_LENGTH = 80;

/** docs/api.md#tasks: the prompt's first line cut to 80 characters (whole code points, never half a pair). */
export function defaultTitle(prompt: string): string {
  const line = prompt
    .split(/\r?\n/)
    .map((text) => text.trim())
    .find((text) => text !== '');
  return line === undefined ? 'Untitled task' : Array.from(line).slice(0, TITLE_LENGTH).join('');
}

/** A prompt as the spec stores it: only the fields the client sent (executor and model override the task's). */
export function promptSpecOf(
  input: Pick<AddPromptBody, 'prompt' | 'files' | 'skills' | 'executor' | 'model'>,
  submittedAt: Date,
): PromptSpec {
  const prompt: PromptSpec = { id: randomUUID(), text: input.prompt, submittedAt: submittedAt.toISOString() };
  if (input.files !== undefined) prompt.files = input.files;
  if (input.skills !== undefined) prompt.skills = input.skills;
  if (input.executor !== undefined) prompt.executor = input.executor;
  if (input.model !== undefined) prompt.model = input.model;
  return prompt;
}

/**
 * A workspace of its own for a task without workspaceId (docs/api.md#agent-computers): claimed from
 * the warm pool or made cold; it counts against limits.agentComputers, and the operator deletes it
 * when it purges the task.
 */
function createEphemeralWorkspace(
  deps: TaskRoutesDeps,
  principal: Principal,
  title: string,
  log: Logger,
): Promise<AgentComputer> {
  return createAgentComputer(
    deps,
    principal,
    { displayName: title, ephemeral: true },
    {
      log,
      limitHint:
        ', and a task without workspaceId makes one; reuse a workspace by passing its id as workspaceId',
    },
  );
}

const hasEnv = (body: CreateTaskBody): boolean => body.env !== undefined && Object.keys(body.env).length > 0;

function taskObject(
  principal: Principal,
  body: CreateTaskBody,
  fields: { executor: string; title: string; workspace: string; now: Date },
): Task {
  const visibility = body.visibility ?? 'shared';
  const githubUrl = body.githubUrl === undefined ? undefined : cloneUrlOf(body.githubUrl);
  const spec = TaskSpecSchema.parse({
    workspace: fields.workspace,
    executor: fields.executor,
    model: body.model,
    title: fields.title,
    owner: principal.user,
    visibility,
    githubUrl,
    // docs/api.md#tasks: the branch defaults to main when a repository is given.
    branch: body.branchName ?? (githubUrl === undefined ? undefined : 'main'),
    prompts: [promptSpecOf({ prompt: body.prompt, files: body.files, skills: body.skills }, fields.now)],
    shareId: visibility === 'public' ? randomUUID() : undefined,
    envNames: hasEnv(body) ? Object.keys(body.env ?? {}).sort() : undefined,
    budget: body.budget,
  });
  return {
    apiVersion: apiVersionOf(TaskType),
    kind: TaskType.kind,
    metadata: {
      name: randomUUID(),
      namespace: principal.namespace,
      labels: { [WORKSPACE_LABEL]: fields.workspace },
    },
    spec,
  };
}

/** Undoes the workspace made for a task whose create failed; a failure here is logged, the task's error wins. */
async function removeWorkspace(deps: TaskRoutesDeps, ac: AgentComputer, logger: Logger): Promise<void> {
  try {
    const left = await deps.store.delete(AgentComputerType, ac.metadata.namespace, ac.metadata.name, {
      uid: ac.metadata.uid,
    });
    deps.readModel.agentComputers.observe(left ?? ac, left === undefined);
  } catch (err) {
    if (isStoreError(err, 'NotFound')) return;
    logger.error(
      { err, workspace: ac.metadata.name },
      'could not remove the workspace of a task that failed',
    );
  }
}

/**
 * POST /tasks (docs/architecture.md#the-life-of-a-task step 1): policy and limits, then the workspace (an existing one, or an
 * ephemeral one made here), then the Task with its first prompt. All or nothing: a Task that
 * cannot be created takes its new workspace with it.
 */
export async function createTask(
  deps: TaskRoutesDeps,
  principal: Principal,
  body: CreateTaskBody,
  logger: Logger,
): Promise<Task> {
  const executor = body.executor ?? principal.organization.spec.executors.default;
  checkExecutor(deps.executors, principal.organization, executor, body.model);
  const title = body.title ?? defaultTitle(body.prompt);
  assertTaskSlot(deps.readModel, principal);
  const workspace =
    body.workspaceId === undefined
      ? await createEphemeralWorkspace(deps, principal, title, logger)
      : await findWorkspace(deps.readModel, principal.namespace, body.workspaceId);
  const made = body.workspaceId === undefined ? workspace : undefined;
  const task = taskObject(principal, body, {
    executor,
    title,
    workspace: workspace.metadata.name,
    now: deps.now(),
  });
  const namespace = principal.namespace;
  try {
    if (body.env !== undefined && hasEnv(body))
      await createTaskEnvSecret(deps.store, namespace, task.metadata.name, body.env);
    const created = await deps.store.create(TaskType, task);
    deps.readModel.observeTask(created);
    if (hasEnv(body)) await adoptTaskEnvSecret(deps.store, created, logger);
    return created;
  } catch (err) {
    if (hasEnv(body))
      await removeTaskEnvSecret(deps.store, namespace, task.metadata.name).catch(() => undefined);
    if (made !== undefined) await removeWorkspace(deps, made, logger);
    throw err;
  }
}
