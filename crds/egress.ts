import { z } from 'zod';
import { isoTimestamp } from './meta.js';

/**
 * Where a workspace may connect through the egress proxy (docs/egress.md). A host is an exact DNS
 * name (`github.com`) or a wildcard for its subdomains (`*.githubusercontent.com`, which does not
 * match the bare name); never an IP address: the proxy resolves names itself and refuses private,
 * loopback and metadata addresses whatever the list says (unless the installation allows private
 * targets, for tests).
 */
export const EgressHostSchema = z
  .string()
  .min(1)
  .max(253)
  .regex(
    /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/,
    'must be a lowercase DNS name, optionally starting with *. for its subdomains',
  )
  .refine((host) => !/^[0-9.]+$/.test(host), 'must be a DNS name, not an IP address');

export const EgressRuleSchema = z
  .object({
    host: EgressHostSchema.describe('A DNS name, or *.<name> for every subdomain of it.'),
    ports: z
      .array(z.number().int().min(1).max(65535))
      .min(1)
      .max(20)
      .optional()
      .describe('TCP ports allowed to that host. Omitted: 443 and 80.'),
  })
  .describe('One allowed destination.');
export type EgressRule = z.infer<typeof EgressRuleSchema>;

export const EgressPolicySchema = z
  .object({
    allow: z
      .array(EgressRuleSchema)
      .max(200)
      .default([])
      .describe(
        'Destinations allowed besides the installation’s (the model gateway, git hosts, package registries). At most 200.',
      ),
  })
  .describe('Egress allowed from workspaces, added to the installation’s list.');
export type EgressPolicy = z.infer<typeof EgressPolicySchema>;

/** One refused connection, as a person reviewing a task sees it. */
export const EgressDenialSchema = z.object({
  host: z.string().max(253).describe('The host the workspace asked for (CONNECT target or Host header).'),
  port: z.number().int().min(0).max(65535).describe('The port it asked for.'),
  reason: z
    .enum(['not_allowed', 'private_address', 'sni_mismatch', 'unresolvable'])
    .describe(
      'not_allowed: not on the list; private_address: resolves to a private, loopback or metadata address; sni_mismatch: the TLS server name differs from the CONNECT host; unresolvable: DNS failed.',
    ),
  firstAt: isoTimestamp.describe('First refusal (RFC 3339).'),
  lastAt: isoTimestamp.describe('Latest refusal (RFC 3339).'),
  count: z.number().int().min(1).describe('Refusals of this host, port and reason.'),
});
export type EgressDenial = z.infer<typeof EgressDenialSchema>;

/** How many distinct denials a task keeps (the count of each grows; new ones past this are dropped). */
export const MAX_EGRESS_DENIALS = 50;
