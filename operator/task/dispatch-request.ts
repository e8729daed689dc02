import { SecretType, agentComputerEnvSecretName, secretValue, taskEnvSecretName } from '../../crds/index.js';
import type { AgentComputer, PromptSpec, Secret, Task } from '../../crds/index.js';
import { conventionsOf } from '../../platform/agent-conventions.js';
import { parseDuration } from '../../platform/duration.js';
import type { ExecutorCatalog, ExecutorDefinition } from '../../platform/executor-catalog.js';
import { uploadedFileKey } from '../../platform/objectstore/keys.js';
import type { ObjectStore } from '../../platform/objectstore/types.js';
import type { DispatchPromptRequest, ExecutorInvocation } from '../../platform/runner-protocol.js';
import { SkillCatalog } from '../../platform/skill-catalog.js';
import { instructionsWithLake } from './lake-instructions.js';
import { promptAccessOf } from './workspace-access.js';
import type { PromptAccess, WorkspaceAccess } from './workspace-access.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { ObjectReader } from '../controller/index.js';

export interface DispatchRequestContext {
  store: ResourceStore;
  /**
   * The operator's caches, where the organization's context lake is read (a dispatch then waits on
   * no round trip for it); the store without them. Secrets are always read from the store: a task's
   * env Secret is written just before the task, and Secrets are not cached.
   */
  caches?: ObjectReader | undefined;
  executors: ExecutorCatalog;
  /**
   * Values for executor variables whose Secret does not exist (the embedded default hands its
   * own ANTHROPIC_API_KEY and the like to local runners). Empty in clusters.
   */
  envFallback: Readonly<Record<string, string>>;
  /** Where uploaded files live; without one, a prompt naming files cannot run. */
  objectStore?: ObjectStore | undefined;
  /** Resolves the skills prompts name (AGENTRY_SKILLS_FILE); none: only `github:` references. */
  skills?: SkillCatalog | undefined;
  /** Skills may come from loopback and private addresses (the webhooks' installation setting). */
  allowPrivateSkillSources?: boolean;
  /** The model gateway and egress proxy (docs/adr/0009); undefined: neither. */
  access?: WorkspaceAccess | undefined;
}

/** How long a runner's download URL of an uploaded file stays valid (it downloads right away). */
const FILE_URL_TTL_SECONDS = 3600;

/** The prompt cannot run as specified (unknown executor, bad model): it fails, it is not retried. */
export class UndispatchableError extends Error {
  override name = 'UndispatchableError';
}

/** Where the executor reads instructions and skills: its definition's paths, else its format's. */
function conventionFields(
  definition: ExecutorDefinition,
): Pick<ExecutorInvocation, 'instructionsFile' | 'skillsDir'> {
  const conventions = conventionsOf(definition.format);
  const skillsDir = definition.skillsDir === undefined ? conventions.skillsDir : definition.skillsDir;
  return {
    instructionsFile: definition.instructionsFile ?? conventions.instructionsFile,
    ...(skillsDir === undefined || skillsDir === null ? {} : { skillsDir }),
  };
}

/**
 * The executor to start for the prompt, with its secrets and the clients' environment resolved,
 * and the gateway's and proxy's variables over both (a client cannot point a routed CLI elsewhere).
 */
async function invocationOf(
  context: DispatchRequestContext,
  task: Task,
  prompt: PromptSpec,
  workspace: AgentComputer | undefined,
): Promise<{ invocation: ExecutorInvocation; access: PromptAccess }> {
  const name = prompt.executor ?? task.spec.executor;
  const namespace = task.metadata.namespace ?? '';
  const definition = context.executors.get(name);
  if (definition === undefined)
    throw new UndispatchableError(`executor "${name}" is not configured in this installation`);
  const model = prompt.model ?? task.spec.model ?? definition.defaultModel;
  const problem = context.executors.modelProblem(name, model);
  if (problem !== undefined) throw new UndispatchableError(problem);
  const timeoutSeconds = Math.ceil(parseDuration(definition.timeout) / 1000);
  const access = promptAccessOf(
    context.access,
    definition,
    {
      namespace,
      task: task.metadata.name,
      prompt: prompt.id,
      executor: name,
      workspace: task.spec.workspace,
    },
    timeoutSeconds,
  );
  const invocation: ExecutorInvocation = {
    name,
    format: definition.format,
    command: definition.command,
    args: definition.args,
    promptVia: definition.promptVia,
    env: {
      ...(await resolveEnv(context, namespace, definition, access.routedKeyVariables)),
      ...(await clientEnv(context.store, namespace, workspace, task)),
      ...access.env,
    },
    timeoutSeconds,
    ...(model === undefined ? {} : { model }),
    ...conventionFields(definition),
  };
  return { invocation, access };
}

/** The prompt's skills with where each comes from, and the instructions (the workspace's, the lake's). */
async function agentFields(
  context: DispatchRequestContext,
  task: Task,
  prompt: PromptSpec,
  workspace: AgentComputer | undefined,
  access: PromptAccess,
): Promise<
  Pick<DispatchPromptRequest, 'skills' | 'skillSources' | 'allowPrivateSkillSources' | 'agentInstructions'>
> {
  const skills = prompt.skills ?? task.spec.skills ?? [];
  const catalog = context.skills ?? EMPTY_CATALOG;
  const namespace = task.metadata.namespace ?? '';
  const instructions = await instructionsWithLake(
    context.caches ?? context.store,
    namespace,
    workspace?.spec.agentInstructions,
    access.env,
  );
  return {
    skills,
    skillSources: skills.map((slug) => catalog.resolve(slug)),
    allowPrivateSkillSources: context.allowPrivateSkillSources ?? false,
    ...(instructions === undefined ? {} : { agentInstructions: instructions }),
  };
}

/** What the runner needs to run one prompt of a task: its text, executor (secrets resolved), repository. */
export async function dispatchRequestOf(
  context: DispatchRequestContext,
  task: Task,
  prompt: PromptSpec,
  workspace?: AgentComputer,
): Promise<DispatchPromptRequest> {
  const namespace = task.metadata.namespace ?? '';
  const { invocation, access } = await invocationOf(context, task, prompt, workspace);
  return {
    text: prompt.text,
    executor: invocation,
    ...(access.modelGateway === undefined ? {} : { modelGateway: access.modelGateway }),
    files: await filesOf(context.objectStore, namespace, prompt.files),
    ...(await agentFields(context, task, prompt, workspace, access)),
    ...(task.spec.githubUrl === undefined ? {} : { githubUrl: task.spec.githubUrl }),
    ...(task.spec.branch === undefined ? {} : { branch: task.spec.branch }),
  };
}

/** A signed download URL per uploaded file; a file never uploaded (or of another org) fails the prompt. */
async function filesOf(
  objectStore: ObjectStore | undefined,
  namespace: string,
  files: readonly { id: string; filename: string }[] | undefined,
): Promise<{ filename: string; url: string }[]> {
  if (files === undefined || files.length === 0) return [];
  if (objectStore === undefined)
    throw new UndispatchableError('the prompt names files, but this installation has no object storage');
  const inputs: { filename: string; url: string }[] = [];
  for (const { id, filename } of files) {
    const key = uploadedFileKey(namespace, id);
    if ((await objectStore.head(key)) === undefined)
      throw new UndispatchableError(`file ${filename} (${id}) was never uploaded`);
    const { url } = await objectStore.signedGetUrl(key, { expiresInSeconds: FILE_URL_TTL_SECONDS });
    inputs.push({ filename, url });
  }
  return inputs;
}

const EMPTY_CATALOG = new SkillCatalog();

/** Every value of a Secret the API wrote (executor environments hold nothing else). */
function secretValues(secret: Secret | undefined): Record<string, string> {
  const values: Record<string, string> = {};
  for (const key of Object.keys(secret?.data ?? {})) {
    const value = secret === undefined ? undefined : secretValue(secret, key);
    if (value !== undefined) values[key] = value;
  }
  return values;
}

/**
 * The clients' environment: the workspace's (PATCH `env`), then the task's (POST /tasks `env`),
 * the later winning. A Secret named by the spec but missing fails the prompt rather than running
 * it without the values the client set.
 */
async function clientEnv(
  store: ResourceStore,
  namespace: string,
  workspace: AgentComputer | undefined,
  task: Task,
): Promise<Record<string, string>> {
  const read = async (name: string, what: string): Promise<Record<string, string>> => {
    const secret = await store.get(SecretType, namespace, name);
    if (secret === undefined) throw new UndispatchableError(`the ${what} environment is missing`);
    return secretValues(secret);
  };
  const fromWorkspace =
    workspace?.spec.envNames === undefined
      ? {}
      : await read(agentComputerEnvSecretName(workspace.metadata.name), "workspace's");
  const fromTask =
    task.spec.envNames === undefined ? {} : await read(taskEnvSecretName(task.metadata.name), "task's");
  return { ...fromWorkspace, ...fromTask };
}

/**
 * Literal values as given; Secret keys read from the task's namespace; a missing Secret leaves the
 * variable unset. Variables the model gateway serves are skipped: their key stays with the gateway.
 */
async function resolveEnv(
  context: DispatchRequestContext,
  namespace: string,
  definition: ExecutorDefinition,
  routed: ReadonlySet<string>,
): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const [variable, source] of Object.entries(definition.env)) {
    if ('value' in source) {
      env[variable] = source.value;
      continue;
    }
    if (routed.has(variable)) continue;
    const secret = await context.store.get(SecretType, namespace, source.secretKeyRef.name);
    const value = secret === undefined ? undefined : secretValue(secret, source.secretKeyRef.key);
    const resolved = value ?? context.envFallback[variable];
    if (resolved !== undefined) env[variable] = resolved;
  }
  return env;
}

/** How long the operator waits past an executor's own time limit before it ends the prompt itself. */
export const TIME_LIMIT_GRACE_MS = 120_000;

/** The prompt's time limit in milliseconds (its executor's, or one hour when the executor is unknown). */
export function timeLimitMs(executors: ExecutorCatalog, task: Task, prompt: PromptSpec): number {
  const definition = executors.get(prompt.executor ?? task.spec.executor);
  return definition === undefined ? 3_600_000 : parseDuration(definition.timeout);
}
