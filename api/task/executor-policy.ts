import type { Organization } from '../../crds/index.js';
import type { ExecutorCatalog } from '../../platform/executor-catalog.js';
import { ApiError } from '../errors.js';

/**
 * Whether a prompt may run with this executor and model (docs/api.md#tasks): the installation must
 * know the executor (400, detail path `executor`), the organization must not have disabled it
 * (403 `agent_disabled`), and a model must be on the executor's list when it has one (400, `model`).
 */
export function checkExecutor(
  catalog: ExecutorCatalog,
  organization: Organization,
  executor: string,
  model: string | undefined,
): void {
  if (catalog.get(executor) === undefined) {
    const message = catalog.modelProblem(executor, undefined) ?? `unknown executor "${executor}"`;
    throw new ApiError('validation_error', `Request validation failed: executor: ${message}`, [
      { path: 'executor', message },
    ]);
  }
  if (organization.spec.executors.disabled.includes(executor)) {
    throw new ApiError('agent_disabled', `The executor "${executor}" is disabled for this organization`);
  }
  const problem = catalog.modelProblem(executor, model);
  if (problem !== undefined) {
    throw new ApiError('validation_error', `Request validation failed: model: ${problem}`, [
      { path: 'model', message: problem },
    ]);
  }
}
