import { z } from 'zod';
import { AgentComputerType } from '../../crds/index.js';
import type { AgentComputer, OperatingMode } from '../../crds/index.js';
import { isStoreError } from '../../platform/store/types.js';
import { createAgentComputer } from './create.js';
import type { CreateAgentComputerDeps } from './create.js';
import { setOperatingMode } from './operating-mode.js';
import { ApiError } from '../errors.js';
import { findWorkspace } from './find-workspace.js';
import { PatchAgentComputerBodySchema, configureAgentComputer } from './configure.js';
import { PaginationQuerySchema, indexedPage } from '../pagination.js';
import { organizationBucket } from '../read-model.js';
import { AgentComputerPageSchema, AgentComputerRecordSchema, presentAgentComputer } from './present.js';
import { defineRoute } from '../route.js';
import type { RouteDefinition } from '../route.js';

const IdParamsSchema = z.object({ id: z.string().describe("The agent computer's id") });

/** docs/api.md#agent-computers: POST /agent-computers `{ name?, icon? }`. */
export const CreateAgentComputerBodySchema = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  icon: z.string().max(50).optional(),
});

export interface AgentComputerRoutesDeps extends CreateAgentComputerDeps {
  publicUrl: string;
}

export function agentComputerRoutes(deps: AgentComputerRoutesDeps): RouteDefinition[] {
  const findAgentComputer = (namespace: string, id: string): Promise<AgentComputer> =>
    findWorkspace(deps.readModel, namespace, id, 'Agent computer');

  /** POST /:id/stop and /:id/start: set the intent; the operator converges (202). */
  const operatingModeRoute = (
    action: 'stop' | 'start',
    mode: OperatingMode,
    summary: string,
  ): RouteDefinition =>
    defineRoute({
      method: 'post',
      path: `/v1/agent-computers/:id/${action}`,
      operationId: `${action}AgentComputer`,
      summary,
      tag: 'Agent computers',
      scope: 'agent-computers:write',
      params: IdParamsSchema,
      responses: {
        202: {
          description:
            'Accepted: the record with its current status (it has not changed yet) and requestedMode, which status follows',
          schema: AgentComputerRecordSchema,
        },
      },
      handler: async ({ params, principal }) => {
        const ac = await findAgentComputer(principal.namespace, params.id);
        const updated = await setOperatingMode(deps.store, principal.namespace, ac.metadata.name, mode);
        if (updated === undefined) throw ApiError.notFound('Agent computer');
        deps.readModel.agentComputers.observe(updated);
        return { status: 202, body: presentAgentComputer(updated, deps.publicUrl) };
      },
    });

  return [
    defineRoute({
      method: 'post',
      path: '/v1/agent-computers',
      operationId: 'createAgentComputer',
      summary: 'Create an agent computer (a persistent workspace)',
      tag: 'Agent computers',
      scope: 'agent-computers:write',
      body: CreateAgentComputerBodySchema,
      responses: {
        201: { description: 'Created; provisioning starts at once', schema: AgentComputerRecordSchema },
      },
      handler: async ({ body, principal, req }) => {
        const created = await createAgentComputer(
          deps,
          principal,
          { displayName: body.name, icon: body.icon },
          { log: req.log },
        );
        const record = presentAgentComputer(created, deps.publicUrl);
        return { status: 201, body: record, headers: { Location: record.url } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/agent-computers',
      operationId: 'listAgentComputers',
      summary: 'List agent computers, newest first',
      tag: 'Agent computers',
      scope: 'agent-computers:read',
      query: PaginationQuerySchema,
      responses: {
        200: {
          description: 'A page of agent computers',
          schema: AgentComputerPageSchema,
        },
      },
      handler: ({ query, principal }) => {
        const buckets = [organizationBucket(principal.namespace)] as const;
        return {
          status: 200,
          body: indexedPage(deps.readModel.agentComputers, principal.namespace, buckets, query, (ac) =>
            presentAgentComputer(ac, deps.publicUrl),
          ),
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/agent-computers/:id',
      operationId: 'getAgentComputer',
      summary: 'Get one agent computer',
      tag: 'Agent computers',
      scope: 'agent-computers:read',
      params: IdParamsSchema,
      responses: { 200: { description: 'The agent computer', schema: AgentComputerRecordSchema } },
      handler: async ({ params, principal }) => ({
        status: 200,
        body: presentAgentComputer(await findAgentComputer(principal.namespace, params.id), deps.publicUrl),
      }),
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/agent-computers/:id',
      operationId: 'updateAgentComputer',
      summary: "Set an agent computer's name, agent instructions or executor environment",
      tag: 'Agent computers',
      scope: 'agent-computers:write',
      params: IdParamsSchema,
      body: PatchAgentComputerBodySchema,
      responses: { 200: { description: 'The agent computer as changed', schema: AgentComputerRecordSchema } },
      handler: async ({ params, body, principal }) => {
        const ac = await findAgentComputer(principal.namespace, params.id);
        const updated = await configureAgentComputer(deps.store, ac, body);
        deps.readModel.agentComputers.observe(updated);
        return { status: 200, body: presentAgentComputer(updated, deps.publicUrl) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/agent-computers/:id',
      operationId: 'deleteAgentComputer',
      summary: 'Delete an agent computer and everything made for it, its disk included',
      tag: 'Agent computers',
      scope: 'agent-computers:write',
      params: IdParamsSchema,
      responses: { 204: { description: 'Deleted (the workload is removed in the background)' } },
      handler: async ({ params, principal }) => {
        const ac = await findAgentComputer(principal.namespace, params.id);
        const left = await deps.store
          .delete(AgentComputerType, principal.namespace, ac.metadata.name, { uid: ac.metadata.uid })
          .catch((err: unknown) => {
            if (isStoreError(err, 'NotFound')) throw ApiError.notFound('Agent computer');
            throw err;
          });
        if (left === undefined) deps.readModel.agentComputers.observe(ac, true);
        else deps.readModel.agentComputers.observe(left);
        return { status: 204 };
      },
    }),
    operatingModeRoute(
      'stop',
      'Hibernated',
      'Hibernate an agent computer: the machine stops, the disk is kept',
    ),
    operatingModeRoute('start', 'Running', 'Resume a hibernated agent computer'),
  ];
}
