import { AgentComputerConditions } from '../../../crds/index.js';
import type { AgentComputer } from '../../../crds/index.js';
import { isTrue } from '../../../crds/conditions.js';
import type { ResourceStore } from '../../../platform/store/types.js';
import { ApiError } from '../../errors.js';
import type { ReadModel } from '../../read-model.js';
import { setOperatingMode } from '../operating-mode.js';

/**
 * Whether a preview can reach the workspace now: asked to run, its runner ready and its address
 * known. Readiness of any generation counts: adding a preview changes the spec, and the proxy must
 * not wait for the operator to observe that.
 */
export const servesPreviews = (ac: AgentComputer): boolean =>
  ac.spec.operatingMode === 'Running' &&
  ac.status?.provisionError === undefined &&
  ac.status?.endpoint !== undefined &&
  isTrue(ac, AgentComputerConditions.Ready);

/** The 503 of a workspace that did not wake in time; `Retry-After` goes with it. */
export const stillStarting = (): ApiError =>
  new ApiError('service_unavailable', 'The workspace is still starting; retry in a few seconds');

/** Resolves with the workspace once `ready(ac)`, woken by the read model's change listeners (no polling). */
function waitUntil(
  readModel: ReadModel,
  ac: AgentComputer,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<AgentComputer> {
  const namespace = ac.metadata.namespace ?? '';
  const name = ac.metadata.name;
  return new Promise((resolve, reject) => {
    const finish = (outcome: () => void): void => {
      clearTimeout(timer);
      unsubscribe();
      signal.removeEventListener('abort', onAbort);
      outcome();
    };
    const check = (): void => {
      const current = readModel.agentComputers.get(namespace, name);
      if (current === undefined || current.metadata.uid !== ac.metadata.uid)
        finish(() => {
          reject(ApiError.notFound('Preview'));
        });
      else if (servesPreviews(current))
        finish(() => {
          resolve(current);
        });
    };
    const onAbort = (): void => {
      finish(() => {
        reject(stillStarting());
      });
    };
    const timer = setTimeout(onAbort, timeoutMs);
    const unsubscribe = readModel.onWorkspaceChange(namespace, name, check);
    signal.addEventListener('abort', onAbort, { once: true });
    check();
  });
}

/**
 * The workspace, running: a hibernated one is woken the way POST /start wakes it, and the request
 * waits (bounded by `timeoutMs`; then a 503 saying it is still starting) until its runner is ready.
 */
export async function runningWorkspace(
  deps: { store: ResourceStore; readModel: ReadModel },
  ac: AgentComputer,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<AgentComputer> {
  if (servesPreviews(ac)) return ac;
  if (ac.spec.operatingMode !== 'Running') {
    const namespace = ac.metadata.namespace ?? '';
    const written = await setOperatingMode(deps.store, namespace, ac.metadata.name, 'Running');
    if (written === undefined) throw ApiError.notFound('Preview');
    deps.readModel.agentComputers.observe(written);
  }
  return waitUntil(deps.readModel, ac, timeoutMs, signal);
}
