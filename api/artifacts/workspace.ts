import { z } from 'zod';
import type { AgentComputer } from '../../crds/index.js';
import { ApiError } from '../errors.js';
import type { ReadModel } from '../read-model.js';

const isUuid = (id: string): boolean => z.uuid().safeParse(id).success;

/**
 * The caller's workspace (an AgentComputer, named by the id clients see), from the API's cache. One
 * of another organization is simply not in the caller's namespace: 404, as a deleted or unknown one.
 */
export function findWorkspace(readModel: ReadModel, namespace: string, id: string): AgentComputer {
  const workspace = isUuid(id) ? readModel.agentComputers.get(namespace, id) : undefined;
  if (workspace === undefined || workspace.metadata.deletionTimestamp !== undefined)
    throw ApiError.notFound('Workspace');
  return workspace;
}
