import { reservationOf } from '../../crds/index.js';
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
 * from its task's write on, and a lookup waits (bounded) for the rest of that claim to be written.
 */
export async function findWorkspace(
  readModel: ReadModel,
  namespace: string,
  id: string,
  what = 'Workspace',
): Promise<AgentComputer> {
  // Read through on a miss: another API replica may have created it a moment ago.
  const found = await readModel.agentComputerReadThrough(namespace, id);
  const workspace =
    found !== undefined && isHandedOut(readModel, found) ? await completedClaim(readModel, found) : found;
  if (
    workspace === undefined ||
    workspace.metadata.deletionTimestamp !== undefined ||
    (isAvailableMember(workspace) && !isHandedOut(readModel, workspace))
  )
    throw ApiError.notFound(what);
  return workspace;
}

/** How long a lookup waits for the rest of a claim reserved ahead whose task is written. */
const COMPLETION_WAIT_MS = 2_000;

/** Whether the member's claim was reserved ahead and handed out: the task it names is written. */
function isHandedOut(readModel: ReadModel, member: AgentComputer): boolean {
  const reservation = reservationOf(member);
  return (
    reservation !== undefined &&
    readModel.tasks.get(member.metadata.namespace ?? '', reservation.task) !== undefined
  );
}

/**
 * The member once the rest of its claim is written (the task's answer does not wait for it), or
 * as it is after COMPLETION_WAIT_MS: the task's member all the same.
 */
async function completedClaim(
  readModel: ReadModel,
  member: AgentComputer,
): Promise<AgentComputer | undefined> {
  const { namespace = '', name } = member.metadata;
  const current = readModel.agentComputers.get(namespace, name);
  if (current === undefined || !isHandedOut(readModel, current)) return current;
  await new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      unsubscribe();
      resolve();
    };
    const timer = setTimeout(done, COMPLETION_WAIT_MS);
    const unsubscribe = readModel.onWorkspaceChange(namespace, name, done);
  });
  return readModel.agentComputers.get(namespace, name);
}
