import { randomUUID } from 'node:crypto';
import {
  AgentComputerType,
  TASK_CLAIMED_WORKSPACE_ANNOTATION,
  TaskSpecSchema,
  TaskType,
  apiVersionOf,
} from '../../crds/index.js';
import type { AgentComputer, PromptSpec, Task } from '../../crds/index.js';
import { isStoreError } from '../../platform/store/types.js';
import type { Logger } from '../../platform/log.js';
import type { Principal } from '../auth/principal.js';
import type { TaskRoutesDeps } from './access.js';
import { findWorkspace } from '../agent-computer/find-workspace.js';
import { checkExecutor } from './executor-policy.js';
import { assertAgentComputerSlot, createColdAgentComputer } from '../agent-computer/create.js';
import { assertTaskSlot } from './limits.js';
import { cloneUrlOf } from './schemas.js';
import { adoptTaskEnvSecret, createTaskEnvSecret, removeTaskEnvSecret } from './env.js';
import type { AddPromptBody, CreateTaskBody } from './schemas.js';

/** Tasks carry the name of their workspace here, so the operator and kubectl can select by it. */
export const WORKSPACE_LABEL = 'agentry.dev/workspace';
const TITLE_LENGTH = 80;
/** Added to limit_exceeded when a task without workspaceId would need one more agent computer. */
const LIMIT_HINT =
  ', and a task without workspaceId makes one; reuse a workspace by passing its id as workspaceId';

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

const hasEnv = (body: CreateTaskBody): boolean => body.env !== undefined && Object.keys(body.env).length > 0;

/** What a task is written with besides the request: its workspace, and the claim it goes with (claim-binding.ts). */
interface TaskFields {
  executor: string;
  title: string;
  workspace: string;
  now: Date;
  name?: string;
  /** The warm-pool member whose claim is written at the same time as the task. */
  claims?: string;
}

function taskObject(principal: Principal, body: CreateTaskBody, fields: TaskFields): Task {
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
      name: fields.name ?? randomUUID(),
      namespace: principal.namespace,
      labels: { [WORKSPACE_LABEL]: fields.workspace },
      ...(fields.claims === undefined
        ? {}
        : { annotations: { [TASK_CLAIMED_WORKSPACE_ANNOTATION]: fields.claims } }),
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

/** Removes a task written with a claim that lost: it never ran (the operator waits for the claim that names it). */
async function removeTask(
  deps: TaskRoutesDeps,
  task: Task,
  body: CreateTaskBody,
  logger: Logger,
): Promise<void> {
  const { namespace, name, uid } = task.metadata;
  try {
    const left = await deps.store.delete(TaskType, namespace, name, { uid });
    deps.readModel.observeTask(left ?? task, left === undefined);
  } catch (err) {
    if (!isStoreError(err, 'NotFound'))
      logger.error({ err, task: name }, 'could not remove the task of a claim that lost');
  }
  if (hasEnv(body)) await removeTaskEnvSecret(deps.store, namespace ?? '', name).catch(() => undefined);
}

/** Writes the task with its env Secret, all or nothing. */
async function storeTask(
  deps: TaskRoutesDeps,
  body: CreateTaskBody,
  task: Task,
  logger: Logger,
): Promise<Task> {
  const namespace = task.metadata.namespace ?? '';
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
    throw err;
  }
}

/** The task and its ephemeral workspace (claimed or made before it); a task that cannot be written takes the workspace with it. */
async function storeTaskAfter(
  deps: TaskRoutesDeps,
  principal: Principal,
  body: CreateTaskBody,
  fields: Omit<TaskFields, 'workspace'>,
  workspace: AgentComputer,
  logger: Logger,
): Promise<Task> {
  const task = taskObject(principal, body, { ...fields, workspace: workspace.metadata.name });
  try {
    return await storeTask(deps, body, task, logger);
  } catch (err) {
    await removeWorkspace(deps, workspace, logger);
    throw err;
  }
}

/**
 * A task without workspaceId (docs/api.md#agent-computers): its workspace is ephemeral, counts
 * against limits.agentComputers, and is deleted when the operator purges the task. A claim this
 * process reserved ahead costs the task's write alone (crds/workspace-pool/reservation.ts); else a
 * ready warm-pool member is claimed with the task written at the same time (claim-binding.ts); when
 * that claim loses, the usual claim (a few tries) or a cold workspace comes first.
 */
async function createWithOwnWorkspace(
  deps: TaskRoutesDeps,
  principal: Principal,
  body: CreateTaskBody,
  fields: Omit<TaskFields, 'workspace'>,
  logger: Logger,
): Promise<Task> {
  assertAgentComputerSlot(deps, principal, LIMIT_HINT);
  const spec = { displayName: fields.title, ephemeral: true };
  const reserved = await deps.poolClaims.claimReserved(principal, spec, logger, (member, name) =>
    storeTaskAfter(deps, principal, body, { ...fields, name, claims: member.metadata.name }, member, logger),
  );
  if (reserved !== undefined) return reserved.written;
  const name = randomUUID();
  const together = await deps.poolClaims.claimAlongside(principal, spec, logger, {
    taskName: name,
    write: (member) => {
      const claims = member.metadata.name;
      return storeTask(
        deps,
        body,
        taskObject(principal, body, { ...fields, name, workspace: claims, claims }),
        logger,
      );
    },
    undo: (task) => removeTask(deps, task, body, logger),
    undoClaim: (member) => removeWorkspace(deps, member, logger),
  });
  if (together.outcome === 'claimed') return together.written;
  const claimed =
    together.outcome === 'lost' ? await deps.poolClaims.claim(principal, spec, logger) : undefined;
  const workspace = claimed ?? (await createColdAgentComputer(deps, principal, spec));
  return storeTaskAfter(deps, principal, body, fields, workspace, logger);
}

/**
 * POST /tasks (docs/architecture.md#the-life-of-a-task step 1): policy and limits, then the
 * workspace (an existing one, or an ephemeral one claimed or made here) and the Task with its first
 * prompt. All or nothing: a Task that cannot be created takes its new workspace with it.
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
  const fields = { executor, title, now: deps.now() };
  if (body.workspaceId === undefined) return createWithOwnWorkspace(deps, principal, body, fields, logger);
  const workspace = await findWorkspace(deps.readModel, principal.namespace, body.workspaceId);
  return storeTask(
    deps,
    body,
    taskObject(principal, body, { ...fields, workspace: workspace.metadata.name }),
    logger,
  );
}
