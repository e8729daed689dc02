import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  SecretType,
  WebhookEventTypeSchema,
  WebhookSpecSchema,
  WebhookType,
  apiVersionOf,
  secretData,
} from '../../crds/index.js';
import type { Secret, Webhook } from '../../crds/index.js';
import type { Logger } from '../../platform/log.js';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { TargetRefusedError, resolveWebhookTarget } from '../../platform/outbound-targets.js';
import type { Principal } from '../auth/principal.js';
import { OWNER_KEY_LABEL } from '../auth/principal.js';
import { ApiError } from '../errors.js';
import type { ReadModel } from '../read-model.js';

/** The Secret holding a webhook's shared secret (sent as X-Webhook-Secret) is named after it. */
export const webhookSecretName = (id: string): string => `webhook-${id}`;
export const WEBHOOK_SECRET_KEY = 'secret';
const WEBHOOK_SECRET_TYPE = 'agentry.dev/webhook-secret';

/** docs/api.md#webhooks: POST /webhooks `{ url, events, description?, secret? }`; events are deduplicated. */
export const CreateWebhookBodySchema = z.strictObject({
  url: z.url().max(2048),
  events: z
    .array(WebhookEventTypeSchema)
    .min(1)
    .max(50)
    .transform((events) => [...new Set(events)]),
  description: z.string().max(500).optional(),
  secret: z.string().min(1).max(500).optional(),
});
export type CreateWebhookBody = z.infer<typeof CreateWebhookBodySchema>;

export interface WebhookRoutesDeps {
  store: ResourceStore;
  readModel: ReadModel;
  /** Installation policy (AGENTRY_WEBHOOK_PRIVATE_TARGETS); an organization may allow it for itself too. */
  allowPrivateWebhookTargets: boolean;
}

const urlRefused = (message: string): ApiError =>
  new ApiError('validation_error', `Request validation failed: url: ${message}`, [{ path: 'url', message }]);

/** Webhooks of the organization that are not being deleted. */
export const liveWebhooks = (readModel: ReadModel, namespace: string): Webhook[] =>
  readModel.webhooks.list(namespace).filter((webhook) => webhook.metadata.deletionTimestamp === undefined);

/** Same target, however it was spelled: the WHATWG URL serialization (host case, default port, empty path). */
const sameUrl = (a: string, b: string): boolean => URL.canParse(a) && new URL(a).href === new URL(b).href;

/** The scheme rule: https, or http where private targets are allowed; never credentials in the URL. */
function checkUrlForm(url: URL, allowPrivate: boolean): void {
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowPrivate)) {
    throw urlRefused(allowPrivate ? 'must be an http or https URL' : 'must be an https URL');
  }
  // The URL is stored in the Webhook resource, which is no place for a credential: use `secret`.
  if (url.username !== '' || url.password !== '') {
    throw urlRefused('must not contain credentials; send them with the secret field');
  }
}

/** Where the target resolves to must be allowed, or the operator would be a proxy into the cluster. */
async function checkTarget(url: string, allowPrivate: boolean): Promise<void> {
  try {
    await resolveWebhookTarget(url, { allowPrivate });
  } catch (err) {
    if (err instanceof TargetRefusedError) throw urlRefused(err.message);
    throw err;
  }
}

function assertWebhookSlot(readModel: ReadModel, principal: Principal): void {
  const limit = principal.organization.spec.limits.webhooks;
  if (liveWebhooks(readModel, principal.namespace).length >= limit) {
    throw new ApiError(
      'limit_exceeded',
      `The organization may have at most ${limit} webhooks; delete one to register another`,
    );
  }
}

function webhookObject(principal: Principal, body: CreateWebhookBody): Webhook {
  const id = randomUUID();
  return {
    apiVersion: apiVersionOf(WebhookType),
    kind: WebhookType.kind,
    metadata: { name: id, namespace: principal.namespace, labels: { [OWNER_KEY_LABEL]: principal.keyId } },
    spec: WebhookSpecSchema.parse({
      url: body.url,
      events: body.events,
      description: body.description,
      owner: principal.user,
      secretRef: body.secret === undefined ? undefined : { name: webhookSecretName(id) },
    }),
  };
}

/** The Secret is owned by its Webhook, so deleting the webhook garbage-collects it. */
function secretObject(webhook: Webhook, secret: string): Secret {
  const uid = webhook.metadata.uid;
  if (uid === undefined) throw new Error('the store returned a webhook without a uid');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: WEBHOOK_SECRET_TYPE,
    metadata: {
      name: webhookSecretName(webhook.metadata.name),
      namespace: webhook.metadata.namespace,
      labels: { 'app.kubernetes.io/managed-by': 'agentry', 'agentry.dev/webhook': webhook.metadata.name },
      ownerReferences: [
        { apiVersion: webhook.apiVersion, kind: webhook.kind, name: webhook.metadata.name, uid },
      ],
    },
    data: secretData({ [WEBHOOK_SECRET_KEY]: secret }),
  };
}

/** Undoes a webhook whose Secret could not be written; a failure here is logged, the first error wins. */
async function removeWebhook(deps: WebhookRoutesDeps, webhook: Webhook, logger: Logger): Promise<void> {
  try {
    const left = await deps.store.delete(WebhookType, webhook.metadata.namespace, webhook.metadata.name, {
      uid: webhook.metadata.uid,
    });
    deps.readModel.webhooks.observe(left ?? webhook, left === undefined);
  } catch (err) {
    if (isStoreError(err, 'NotFound')) return;
    logger.error({ err, webhook: webhook.metadata.name }, 'could not remove a webhook whose secret failed');
  }
}

/**
 * POST /webhooks: the URL's form, then the same URL registered already (idempotent: that one, as it
 * is), then the organization's limit, then where the target resolves to; then the Webhook and its
 * Secret, all or nothing. The duplicate check comes before DNS, so re-registering never depends on
 * a lookup succeeding.
 */
export async function createWebhook(
  deps: WebhookRoutesDeps,
  principal: Principal,
  body: CreateWebhookBody,
  logger: Logger,
): Promise<{ webhook: Webhook; created: boolean }> {
  const allowPrivate =
    deps.allowPrivateWebhookTargets || principal.organization.spec.allowPrivateWebhookTargets;
  checkUrlForm(new URL(body.url), allowPrivate);
  const existing = liveWebhooks(deps.readModel, principal.namespace).find((webhook) =>
    sameUrl(webhook.spec.url, body.url),
  );
  if (existing !== undefined) return { webhook: existing, created: false };
  assertWebhookSlot(deps.readModel, principal);
  await checkTarget(body.url, allowPrivate);

  const webhook = await deps.store.create(WebhookType, webhookObject(principal, body));
  deps.readModel.webhooks.observe(webhook);
  if (body.secret !== undefined) {
    try {
      await deps.store.create(SecretType, secretObject(webhook, body.secret));
    } catch (err) {
      await removeWebhook(deps, webhook, logger);
      throw new Error('creating the secret of a webhook', { cause: err });
    }
  }
  return { webhook, created: true };
}
