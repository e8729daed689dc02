import { findCondition } from '../conditions.js';
import { AgentComputerConditions } from './conditions.js';
import type { AgentComputer } from './types.js';
import { workloadDigest } from './workload-digest.js';

/**
 * Whether the workspace is ready for its current spec: the one rule the operator (before it
 * dispatches a prompt) and the API (a workspace's REST status, the runner it streams events from)
 * decide readiness with. Ready must be True, and speak for the current spec: observed for the
 * current generation, or for an older one whose workload (status.observedWorkload, written in the
 * same status write) is the current spec's. A spec change that touches no workload field (a
 * warm-pool claim writing owner, name and idle timeout; a rename; new agent instructions) leaves
 * the runner as it was, so it stays ready without waiting for the operator to observe the new
 * generation; any workload change (a restart, hibernation, resources, the runtime) waits for it.
 */
export function readyForCurrentSpec(ac: AgentComputer): boolean {
  const ready = findCondition(ac.status?.conditions, AgentComputerConditions.Ready);
  if (ready?.status !== 'True') return false;
  if (ready.observedGeneration === ac.metadata.generation) return true;
  const observedWorkload = ac.status?.observedWorkload;
  return (
    observedWorkload !== undefined &&
    ready.observedGeneration !== undefined &&
    ready.observedGeneration === ac.status?.observedGeneration &&
    observedWorkload === workloadDigest(ac.spec)
  );
}
