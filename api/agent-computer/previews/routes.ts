import { z } from 'zod';
import { PreviewIdSchema } from '../../../crds/index.js';
import type { AgentComputer } from '../../../crds/index.js';
import type { ResourceStore } from '../../../platform/store/types.js';
import { ApiError } from '../../errors.js';
import type { ReadModel } from '../../read-model.js';
import { defineRoute } from '../../route.js';
import type { RouteDefinition } from '../../route.js';
import { findWorkspace } from '../find-workspace.js';
import { addPreview, livePreviews, removePreview } from './preview-list.js';
import { PreviewListSchema, PreviewRecordSchema, presentPreview } from './present.js';
import type { PreviewUrlSettings } from './present.js';
import { newPreviewId } from './token.js';
import type { PreviewTokens } from './token.js';

const DEFAULT_EXPIRES_IN_SECONDS = 3600;

/** docs/api.md#previews: POST /agent-computers/:id/previews `{ port, expiresInSeconds? }`. */
export const CreatePreviewBodySchema = z.strictObject({
  port: z.number().int().min(1).max(65535).describe('The TCP port in the workspace'),
  expiresInSeconds: z
    .number()
    .int()
    .min(60)
    .max(86_400)
    .default(DEFAULT_EXPIRES_IN_SECONDS)
    .describe('How long the URL works: 60-86400 seconds, default 3600'),
});

const IdParamsSchema = z.object({ id: z.string().describe("The agent computer's id") });
const PreviewParamsSchema = IdParamsSchema.extend({
  previewId: z.string().describe("The preview's id"),
});

export interface PreviewRoutesDeps {
  store: ResourceStore;
  readModel: ReadModel;
  tokens: PreviewTokens;
  urls: PreviewUrlSettings;
  now: () => Date;
}

/** Caches what this process wrote, so its URL works here (and a revocation holds here) at once. */
function observe(readModel: ReadModel, written: AgentComputer): void {
  readModel.agentComputers.observe(written);
  const cached = readModel.agentComputers.get(written.metadata.namespace, written.metadata.name);
  readModel.previews.update(cached ?? written, false);
}

/** Create, list and revoke the preview URLs of an agent computer. */
export function previewRoutes(deps: PreviewRoutesDeps): RouteDefinition[] {
  const find = (namespace: string, id: string): Promise<AgentComputer> =>
    findWorkspace(deps.readModel, namespace, id, 'Agent computer');
  return [
    defineRoute({
      method: 'post',
      path: '/v1/agent-computers/:id/previews',
      operationId: 'createPreview',
      summary: 'Make a signed, expiring URL that reaches a port of the agent computer',
      description:
        'The URL proxies HTTP and WebSocket to what listens on the port in the workspace, waking it first when it hibernates. At most 20 live previews per agent computer.',
      tag: 'Agent computers',
      scope: 'agent-computers:write',
      params: IdParamsSchema,
      body: CreatePreviewBodySchema,
      responses: { 201: { description: 'The preview and its URL', schema: PreviewRecordSchema } },
      handler: async ({ params, body, principal }) => {
        const ac = await find(principal.namespace, params.id);
        const now = deps.now();
        const preview = {
          id: newPreviewId(),
          port: body.port,
          createdAt: now.toISOString(),
          expiresAt: new Date(now.getTime() + body.expiresInSeconds * 1000).toISOString(),
          createdBy: principal.user,
        };
        const updated = await addPreview(deps.store, ac, preview, now);
        observe(deps.readModel, updated);
        return { status: 201, body: presentPreview(updated, preview, deps.tokens, deps.urls) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/agent-computers/:id/previews',
      operationId: 'listPreviews',
      summary: "List an agent computer's live previews (expired ones are left out)",
      tag: 'Agent computers',
      scope: 'agent-computers:read',
      params: IdParamsSchema,
      responses: { 200: { description: 'The live previews, oldest first', schema: PreviewListSchema } },
      handler: async ({ params, principal }) => {
        const ac = await find(principal.namespace, params.id);
        const data = livePreviews(ac, deps.now()).map((preview) =>
          presentPreview(ac, preview, deps.tokens, deps.urls),
        );
        return { status: 200, body: { data } };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/agent-computers/:id/previews/:previewId',
      operationId: 'deletePreview',
      summary: 'Revoke a preview: its URL stops working at once',
      tag: 'Agent computers',
      scope: 'agent-computers:write',
      params: PreviewParamsSchema,
      responses: { 204: { description: 'Revoked' } },
      handler: async ({ params, principal }) => {
        const ac = await find(principal.namespace, params.id);
        if (!PreviewIdSchema.safeParse(params.previewId).success) throw ApiError.notFound('Preview');
        const updated = await removePreview(deps.store, ac, params.previewId, deps.now());
        observe(deps.readModel, updated);
        return { status: 204 };
      },
    }),
  ];
}
