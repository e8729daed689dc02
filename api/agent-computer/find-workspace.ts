import { TASK_CLAIMED_WORKSPACE_ANNOTATION, claimedForTask, reservationOf } from '../../crds/index.js';
import type { AgentComputer } from '../../crds/index.js';
import { ApiError } from '../errors.js';
import type { ReadModel } from '../read-model.js';
import { isAvailableMember } from '../workspace-pool/members.js';

/**
 * The caller's workspace (an AgentComputer, named by the id clients see), from the API's cache. One
 * of another organization is simply not in the caller's namespace: 404, as a deleted or unknown one.
 * `what` names it in the 404 as the route's clients know it. Any name is looked up: one made with
 * kubectl is not a UUID (api/ids.ts). A warm-pool member nobody has claimed is no one's workspace yet:
 * 404 too (docs/adr/0008-warm-pools.md); one whose claim was reserved ahead is the organization's
 * from its task's write on, and is shown as the rest of its claim will write it.
 */
export async function findWorkspace(
  readModel: ReadModel,
  namespace: string,
  id: string,
  what = 'Workspace',
): Promise<AgentComputer> {
  // Read through on a miss: another API replica may have created it a moment ago.
  const found = await readModel.agentComputerReadThrough(namespace, id);
  const workspace = found === undefined ? undefined : (claimedView(readModel, found) ?? found);
  if (
    workspace === undefined ||
    workspace.metadata.deletionTimestamp !== undefined ||
    isAvailableMember(workspace)
  )
    throw ApiError.notFound(what);
  return workspace;
}

/**
 * A member reserved ahead whose task is written (crds/workspace-pool/reservation.ts), as the rest
 * of its claim will write it: the API process that handed it out writes that a second after the
 * task's answer (api/workspace-pool/reservations.ts), and the member is the task's from the
 * task's write on. A write based on this view completes the claim itself. Undefined for any other
 * member, or before the task is seen.
 */
function claimedView(readModel: ReadModel, member: AgentComputer): AgentComputer | undefined {
  const reservation = reservationOf(member);
  if (reservation === undefined) return undefined;
  const task = readModel.tasks.get(member.metadata.namespace ?? '', reservation.task);
  if (task?.metadata.annotations?.[TASK_CLAIMED_WORKSPACE_ANNOTATION] !== member.metadata.name)
    return undefined;
  return claimedForTask(member, task, new Date(task.metadata.creationTimestamp ?? Date.now()));
}
