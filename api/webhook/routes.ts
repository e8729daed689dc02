import { z } from 'zod';
import { WebhookType } from '../../crds/index.js';
import type { Webhook } from '../../crds/index.js';
import { isStoreError } from '../../platform/store/types.js';
import { ApiError } from '../errors.js';
import { PaginationQuerySchema, indexedPage } from '../pagination.js';
import { organizationBucket } from '../read-model.js';
import {
  PublicKeyDocumentSchema,
  WebhookPageSchema,
  WebhookRecordSchema,
  presentWebhook,
} from './present.js';
import type { ReadModel } from '../read-model.js';
import { defineRoute } from '../route.js';
import type { RouteDefinition } from '../route.js';
import { CreateWebhookBodySchema, createWebhook } from './create.js';
import type { WebhookRoutesDeps } from './create.js';
import type { SigningKeysCache } from './signing-keys-cache.js';

const TAG = 'Webhooks';
const IdParamsSchema = z.object({ id: z.string().describe("The webhook's id") });

export type { WebhookRoutesDeps } from './create.js';

function findWebhook(readModel: ReadModel, namespace: string, id: string): Webhook {
  const webhook = readModel.webhooks.get(namespace, id);
  if (webhook === undefined || webhook.metadata.deletionTimestamp !== undefined)
    throw ApiError.notFound('Webhook');
  return webhook;
}

const webhookUrl = (publicUrl: string, id: string): string => `${publicUrl}/v1/webhooks/${id}`;

const createWebhookRoute = (deps: WebhookRoutesDeps & { publicUrl: string }): RouteDefinition =>
  defineRoute({
    method: 'post',
    path: '/v1/webhooks',
    operationId: 'createWebhook',
    summary: 'Register a webhook for task events (the same URL again answers the existing one)',
    tag: TAG,
    scope: 'webhooks:write',
    body: CreateWebhookBodySchema,
    responses: {
      201: { description: 'Registered', schema: WebhookRecordSchema },
      200: {
        description: 'This URL was registered already: that webhook, unchanged',
        schema: WebhookRecordSchema,
      },
    },
    handler: async ({ body, principal, req }) => {
      const { webhook, created } = await createWebhook(deps, principal, body, req.log);
      const record = presentWebhook(webhook);
      if (!created) return { status: 200, body: record };
      return { status: 201, body: record, headers: { Location: webhookUrl(deps.publicUrl, record.id) } };
    },
  });

const listWebhooksRoute = (deps: WebhookRoutesDeps): RouteDefinition =>
  defineRoute({
    method: 'get',
    path: '/v1/webhooks',
    operationId: 'listWebhooks',
    summary: 'List webhooks, newest first',
    tag: TAG,
    scope: 'webhooks:read',
    query: PaginationQuerySchema,
    responses: {
      200: { description: 'A page of webhooks', schema: WebhookPageSchema },
    },
    handler: ({ query, principal }) => ({
      status: 200,
      body: indexedPage(
        deps.readModel.webhooks,
        principal.namespace,
        [organizationBucket(principal.namespace)],
        query,
        presentWebhook,
      ),
    }),
  });

const getWebhookRoute = (deps: WebhookRoutesDeps): RouteDefinition =>
  defineRoute({
    method: 'get',
    path: '/v1/webhooks/:id',
    operationId: 'getWebhook',
    summary: 'Get one webhook',
    tag: TAG,
    scope: 'webhooks:read',
    params: IdParamsSchema,
    responses: { 200: { description: 'The webhook', schema: WebhookRecordSchema } },
    handler: ({ params, principal }) => ({
      status: 200,
      body: presentWebhook(findWebhook(deps.readModel, principal.namespace, params.id)),
    }),
  });

const deleteWebhookRoute = (deps: WebhookRoutesDeps): RouteDefinition =>
  defineRoute({
    method: 'delete',
    path: '/v1/webhooks/:id',
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook; its secret goes with it, and deliveries still owed to it are dropped',
    tag: TAG,
    scope: 'webhooks:write',
    params: IdParamsSchema,
    responses: { 204: { description: 'Deleted' } },
    handler: async ({ params, principal }) => {
      const webhook = findWebhook(deps.readModel, principal.namespace, params.id);
      const left = await deps.store
        .delete(WebhookType, principal.namespace, webhook.metadata.name, { uid: webhook.metadata.uid })
        .catch((err: unknown) => {
          if (isStoreError(err, 'NotFound')) throw ApiError.notFound('Webhook');
          throw err;
        });
      deps.readModel.webhooks.observe(left ?? webhook, left === undefined);
      return { status: 204 };
    },
  });

const publicKeyRoute = (signingKeys: SigningKeysCache): RouteDefinition =>
  defineRoute({
    method: 'get',
    path: '/v1/webhooks/public_key',
    operationId: 'getWebhookPublicKey',
    summary:
      'The Ed25519 public key that verifies webhook signatures, and during a rotation the previous one',
    tag: TAG,
    scope: 'webhooks:read',
    responses: { 200: { description: 'The public key document', schema: PublicKeyDocumentSchema } },
    handler: async () => ({ status: 200, body: (await signingKeys.get()).publicKeyDocument() }),
  });

/** The webhook routes of docs/api.md#webhooks; deliveries are the operator's. */
export const webhookRoutes = (
  deps: WebhookRoutesDeps & { publicUrl: string; signingKeys: SigningKeysCache },
): RouteDefinition[] => [
  // Before /:id, so that "public_key" is never taken for an id.
  publicKeyRoute(deps.signingKeys),
  createWebhookRoute(deps),
  listWebhooksRoute(deps),
  getWebhookRoute(deps),
  deleteWebhookRoute(deps),
];
