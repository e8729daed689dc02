import { z } from 'zod';
import { GROUP, VERSION, isoTimestamp } from '../meta.js';
import { defineCustomResource } from '../resource.js';
import type { CustomResource } from '../resource.js';
import { WebhookEventTypeSchema } from '../task/types.js';

export const WebhookSpecSchema = z.object({
  url: z.url().max(2048),
  events: z.array(WebhookEventTypeSchema).min(1).max(5),
  description: z.string().max(500).optional(),
  /** Secret (same namespace) whose key `secret` is sent as X-Webhook-Secret; never inline. */
  secretRef: z.object({ name: z.string().min(1).max(253) }).optional(),
  /** The user (API key owner) who registered it. */
  owner: z.string().min(1).max(253).optional(),
});
export type WebhookSpec = z.infer<typeof WebhookSpecSchema>;

export const WebhookStatusSchema = z.object({
  /** False after the target answered 410 Gone. */
  isActive: z.boolean().optional(),
  /**
   * Failed delivery attempts since the last success, retries included (so a target that is down
   * shows it within seconds, not after a delivery's day of retries); reset by a success.
   */
  failureCount: z.number().int().min(0).optional(),
  /** The latest delivery attempt, successful or not. */
  lastTriggeredAt: isoTimestamp.optional(),
  lastError: z.string().max(1024).optional(),
});
export type WebhookStatus = z.infer<typeof WebhookStatusSchema>;

export const WebhookType = defineCustomResource({
  group: GROUP,
  version: VERSION,
  kind: 'Webhook',
  plural: 'webhooks',
  singular: 'webhook',
  namespaced: true,
  shortNames: ['awh'],
  description: 'An outbound webhook: task transitions are POSTed to url, signed with Ed25519.',
  spec: WebhookSpecSchema,
  status: WebhookStatusSchema,
  printerColumns: [
    { name: 'URL', type: 'string', jsonPath: '.spec.url' },
    { name: 'Active', type: 'boolean', jsonPath: '.status.isActive' },
    { name: 'Failures', type: 'integer', jsonPath: '.status.failureCount' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});
export type Webhook = CustomResource<WebhookSpec, WebhookStatus>;
