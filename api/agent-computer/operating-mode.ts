import { AgentComputerType, HIBERNATED_BY_ANNOTATION } from '../../crds/index.js';
import type { AgentComputer, OperatingMode } from '../../crds/index.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { updateWithRetry } from '../optimistic-update.js';

/**
 * Sets the workspace's intent (POST /start and /stop, and a preview request that wakes it); the
 * operator converges. A user's (or a visitor's) choice clears the operator's idle-hibernation mark.
 * Resolves the object as written (or as it was when nothing changed); undefined when it is gone.
 */
export function setOperatingMode(
  store: ResourceStore,
  namespace: string,
  name: string,
  mode: OperatingMode,
): Promise<AgentComputer | undefined> {
  return updateWithRetry(store, AgentComputerType, namespace, name, (current) => {
    if (current.spec.operatingMode === mode && current.metadata.deletionTimestamp === undefined)
      return undefined;
    const annotations = Object.fromEntries(
      Object.entries(current.metadata.annotations ?? {}).filter(([key]) => key !== HIBERNATED_BY_ANNOTATION),
    );
    return {
      ...current,
      metadata: { ...current.metadata, annotations },
      spec: { ...current.spec, operatingMode: mode },
    };
  });
}
