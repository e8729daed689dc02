import { z } from 'zod';
import { GROUP, VERSION, isoTimestamp } from '../meta.js';
import { defineCustomResource } from '../resource.js';
import type { CustomResource } from '../resource.js';
import { WebhookEventTypeSchema } from '../task/types.js';

export const WebhookSpecSchema = z
  .object({
    url: z
      .url()
      .max(2048)
      .describe(
        "Where task events are POSTed, signed with the installation's Ed25519 key: an https URL (http only where private targets are allowed).",
      ),
    events: z
      .array(WebhookEventTypeSchema)
      .min(1)
      .max(5)
      .describe(
        'Task transitions to deliver: task.created, task.running, task.completed, task.failed, task.canceled (1-5).',
      ),
    description: z
      .string()
      .max(500)
      .optional()
      .describe('What the webhook is for, for people; at most 500 characters.'),
    secretRef: z
      .object({
        name: z.string().min(1).max(253).describe('Name of the Secret in the same namespace.'),
      })
      .optional()
      .describe(
        'Secret (same namespace) whose key `secret` is sent with every delivery as the X-Webhook-Secret header; never inline.',
      ),
    owner: z
      .string()
      .min(1)
      .max(253)
      .optional()
      .describe('The user (API key owner) who registered it; set by the REST API.'),
  })
  .describe('Desired state of the webhook: where to deliver which task events.');
export type WebhookSpec = z.infer<typeof WebhookSpecSchema>;

export const WebhookStatusSchema = z
  .object({
    isActive: z
      .boolean()
      .optional()
      .describe('False once the target answered 410 Gone: nothing more is delivered to it.'),
    // Retries count, so a target that is down shows it within seconds, not after a delivery's day of retries.
    failureCount: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('Failed delivery attempts since the last success, retries included; a success resets it.'),
    lastTriggeredAt: isoTimestamp
      .optional()
      .describe('When a delivery was last attempted, successful or not.'),
    lastError: z.string().max(1024).optional().describe('Why the latest failed delivery attempt failed.'),
  })
  .describe('Observed state of the webhook, written by the operator as it delivers.');
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
