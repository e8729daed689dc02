import { z } from 'zod';
import { WebhookEventTypeSchema } from '../../crds/index.js';
import type { Webhook } from '../../crds/index.js';
import { isoMillis } from '../agent-computer/present.js';
import { listEnvelopeSchema } from '../pagination.js';

/** The webhook record of docs/api.md#webhooks. The secret itself is never part of it, only whether there is one. */
export const WebhookRecordSchema = z.object({
  /** A UUID; the name of one made with kubectl (api/ids.ts). */
  id: z.string(),
  url: z.string(),
  events: z.array(WebhookEventTypeSchema),
  description: z.string().nullable(),
  hasSecret: z.boolean(),
  isActive: z.boolean(),
  createdAt: z.string(),
  lastTriggeredAt: z.string().nullable(),
  failureCount: z.number().int(),
});
export type WebhookRecord = z.infer<typeof WebhookRecordSchema>;
export const WebhookPageSchema = listEnvelopeSchema(WebhookRecordSchema);

const PublicKeyInfoSchema = z.object({
  keyId: z.string(),
  publicKey: z.string(),
  publicKeyPem: z.string(),
});

/** GET /v1/webhooks/public_key: the current key, and the previous ones still signing during a rotation. */
export const PublicKeyDocumentSchema = PublicKeyInfoSchema.extend({
  algorithm: z.literal('ed25519'),
  previous: z.array(PublicKeyInfoSchema.extend({ retiresAt: z.string() })),
});

export function presentWebhook(webhook: Webhook): WebhookRecord {
  const lastTriggeredAt = webhook.status?.lastTriggeredAt;
  return {
    id: webhook.metadata.name,
    url: webhook.spec.url,
    events: webhook.spec.events,
    description: webhook.spec.description ?? null,
    hasSecret: webhook.spec.secretRef !== undefined,
    // The operator sets isActive false after a 410 Gone; until it has written anything, it is active.
    isActive: webhook.status?.isActive ?? true,
    createdAt: isoMillis(webhook.metadata.creationTimestamp ?? new Date(0).toISOString()),
    lastTriggeredAt: lastTriggeredAt === undefined ? null : isoMillis(lastTriggeredAt),
    failureCount: webhook.status?.failureCount ?? 0,
  };
}
