import { SecretType, secretData, taskEnvSecretName } from '../../crds/index.js';
import type { Secret, Task } from '../../crds/index.js';
import type { ExecutorEnv } from '../../platform/executor-env.js';
import type { Logger } from '../../platform/log.js';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { updateWithRetry } from '../optimistic-update.js';

/**
 * A task's executor environment (POST /tasks `env`) lives only in a Secret named after the task.
 * It is written before the Task, so the operator never dispatches a prompt without it; once the
 * Task exists it becomes the Secret's owner, so purging the task removes it.
 */

const TASK_ENV_SECRET_TYPE = 'agentry.dev/executor-env';

export async function createTaskEnvSecret(
  store: ResourceStore,
  namespace: string,
  taskName: string,
  env: ExecutorEnv,
): Promise<void> {
  const secret: Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    type: TASK_ENV_SECRET_TYPE,
    metadata: {
      name: taskEnvSecretName(taskName),
      namespace,
      labels: { 'app.kubernetes.io/managed-by': 'agentry', 'agentry.dev/task': taskName },
    },
    data: secretData(env),
  };
  await store.create(SecretType, secret);
}

/** Hands the Secret to its Task; a failure is logged (the purge removes it by name as well). */
export async function adoptTaskEnvSecret(store: ResourceStore, task: Task, logger: Logger): Promise<void> {
  const uid = task.metadata.uid;
  if (uid === undefined) return;
  const owner = { apiVersion: task.apiVersion, kind: task.kind, name: task.metadata.name, uid };
  try {
    await updateWithRetry(
      store,
      SecretType,
      task.metadata.namespace,
      taskEnvSecretName(task.metadata.name),
      (s) => ({
        ...s,
        metadata: { ...s.metadata, ownerReferences: [owner] },
      }),
    );
  } catch (err) {
    logger.warn({ err, task: task.metadata.name }, 'could not make the task the owner of its environment');
  }
}

/** Removes the Secret of a task that was not created, or was purged. */
export async function removeTaskEnvSecret(
  store: ResourceStore,
  namespace: string,
  taskName: string,
): Promise<void> {
  await store.delete(SecretType, namespace, taskEnvSecretName(taskName)).catch((err: unknown) => {
    if (!isStoreError(err, 'NotFound')) throw err;
  });
}
