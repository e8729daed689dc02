import { AgentComputerConditions } from '../../../crds/index.js';
import type { AgentComputer } from '../../../crds/index.js';
import { isTrue } from '../../../crds/conditions.js';
import type { ResourceStore } from '../../../platform/store/types.js';
import { ApiError } from '../../errors.js';
import type { ReadModel } from '../../read-model.js';
import { setOperatingMode } from '../operating-mode.js';
import { untilObserved } from '../../until-observed.js';

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

/** Resolves with the workspace once it serves previews, woken by the read model's change listeners (no polling). */
function waitUntilServing(
  readModel: ReadModel,
  ac: AgentComputer,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<AgentComputer> {
  const namespace = ac.metadata.namespace ?? '';
  const name = ac.metadata.name;
  return untilObserved<AgentComputer>(
    (onChange) => readModel.onWorkspaceChange(namespace, name, onChange),
    () => {
      const current = readModel.agentComputers.get(namespace, name);
      if (current === undefined || current.metadata.uid !== ac.metadata.uid)
        return { error: ApiError.notFound('Preview') };
      return servesPreviews(current) ? { value: current } : undefined;
    },
    AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
    stillStarting,
  );
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
  return waitUntilServing(deps.readModel, ac, timeoutMs, signal);
}
