import { AgentComputerConditions, POOL_CLAIMED_GENERATION_ANNOTATION } from '../../crds/index.js';
import type { AgentComputer } from '../../crds/index.js';
import { findCondition, isTrueForGeneration } from '../../crds/conditions.js';

/**
 * Whether prompts may go to the workspace's runner: Ready for its current spec. One exception saves a
 * warm-pool claim a reconcile round (docs/adr/0008-warm-pools.md): a claim rewrites only who owns the
 * member and its name, never its workload, so while the member is at the generation the claim made,
 * Ready observed at the generation just before still describes the same runner.
 */
export function readyForPrompts(workspace: AgentComputer): boolean {
  if (isTrueForGeneration(workspace, AgentComputerConditions.Ready)) return true;
  const claimed = Number(workspace.metadata.annotations?.[POOL_CLAIMED_GENERATION_ANNOTATION]);
  const generation = workspace.metadata.generation;
  if (!Number.isInteger(claimed) || generation === undefined || claimed !== generation) return false;
  const ready = findCondition(workspace.status?.conditions, AgentComputerConditions.Ready);
  return ready?.status === 'True' && ready.observedGeneration === generation - 1;
}
