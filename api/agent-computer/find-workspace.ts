import type { AgentComputer } from '../../crds/index.js';
import { ApiError } from '../errors.js';
import type { ReadModel } from '../read-model.js';
import { isAvailableMember } from '../workspace-pool/members.js';

/**
 * The caller's workspace (an AgentComputer, named by the id clients see), from the API's cache. One
 * of another organization is simply not in the caller's namespace: 404, as a deleted or unknown one.
 * `what` names it in the 404 as the route's clients know it. Any name is looked up: one made with
 * kubectl is not a UUID (api/ids.ts). A warm-pool member nobody has claimed is no one's workspace yet:
 * 404 too (docs/adr/0008-warm-pools.md).
 */
export async function findWorkspace(
  readModel: ReadModel,
  namespace: string,
  id: string,
  what = 'Workspace',
): Promise<AgentComputer> {
  // Read through on a miss: another API replica may have created it a moment ago.
  const workspace = await readModel.agentComputerReadThrough(namespace, id);
  if (
    workspace === undefined ||
    workspace.metadata.deletionTimestamp !== undefined ||
    isAvailableMember(workspace)
  )
    throw ApiError.notFound(what);
  return workspace;
}
