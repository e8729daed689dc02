import { SecretType, secretValue } from '../../crds/index.js';
import type { PromptSpec, Task } from '../../crds/index.js';
import { parseDuration } from '../../platform/duration.js';
import type { ExecutorCatalog, ExecutorDefinition } from '../../platform/executor-catalog.js';
import { uploadedFileKey } from '../../platform/objectstore/keys.js';
import type { ObjectStore } from '../../platform/objectstore/types.js';
import type { DispatchPromptRequest, ExecutorInvocation } from '../../platform/runner-protocol.js';
import type { ResourceStore } from '../../platform/store/types.js';

export interface DispatchRequestContext {
  store: ResourceStore;
  executors: ExecutorCatalog;
  /**
   * Values for executor variables whose Secret does not exist (the embedded default hands its
   * own ANTHROPIC_API_KEY and the like to local runners). Empty in clusters.
   */
  envFallback: Readonly<Record<string, string>>;
  /** Where uploaded files live; without one, a prompt naming files cannot run. */
  objectStore?: ObjectStore | undefined;
}

/** How long a runner's download URL of an uploaded file stays valid (it downloads right away). */
const FILE_URL_TTL_SECONDS = 3600;

/** The prompt cannot run as specified (unknown executor, bad model): it fails, it is not retried. */
export class UndispatchableError extends Error {
  override name = 'UndispatchableError';
}

/** What the runner needs to run one prompt of a task: its text, executor (secrets resolved), repository. */
export async function dispatchRequestOf(
  context: DispatchRequestContext,
  task: Task,
  prompt: PromptSpec,
): Promise<DispatchPromptRequest> {
  const name = prompt.executor ?? task.spec.executor;
  const namespace = task.metadata.namespace ?? '';
  const definition = context.executors.get(name);
  if (definition === undefined)
    throw new UndispatchableError(`executor "${name}" is not configured in this installation`);
  const model = prompt.model ?? task.spec.model ?? definition.defaultModel;
  const problem = context.executors.modelProblem(name, model);
  if (problem !== undefined) throw new UndispatchableError(problem);
  const invocation: ExecutorInvocation = {
    name,
    format: definition.format,
    command: definition.command,
    args: definition.args,
    promptVia: definition.promptVia,
    env: await resolveEnv(context, namespace, definition),
    timeoutSeconds: Math.ceil(parseDuration(definition.timeout) / 1000),
    ...(model === undefined ? {} : { model }),
  };
  return {
    text: prompt.text,
    executor: invocation,
    files: await filesOf(context.objectStore, namespace, prompt.files),
    skills: prompt.skills ?? task.spec.skills ?? [],
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

/** Literal values as given; Secret keys read from the task's namespace; a missing Secret leaves the variable unset. */
async function resolveEnv(
  context: DispatchRequestContext,
  namespace: string,
  definition: ExecutorDefinition,
): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const [variable, source] of Object.entries(definition.env)) {
    if ('value' in source) {
      env[variable] = source.value;
      continue;
    }
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
