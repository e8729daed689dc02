// agent-sandbox's Sandbox (agents.x-k8s.io/v1beta1), as much of it as the bench writes and reads.
import { z } from 'zod';
import { ObjectMetaSchema } from '../../crds/index.js';
import type { ResourceType } from '../../crds/index.js';

const SandboxSchema = z.object({
  apiVersion: z.literal('agents.x-k8s.io/v1beta1'),
  kind: z.literal('Sandbox'),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({}),
  status: z
    .looseObject({ conditions: z.array(z.looseObject({ type: z.string(), status: z.string() })).optional() })
    .optional(),
});
export type Sandbox = z.infer<typeof SandboxSchema>;

export const SandboxType: ResourceType<Sandbox> = {
  group: 'agents.x-k8s.io',
  version: 'v1beta1',
  kind: 'Sandbox',
  plural: 'sandboxes',
  namespaced: true,
  hasStatusSubresource: true,
  schema: SandboxSchema,
};

export const sandboxReady = (sandbox: Sandbox): boolean =>
  sandbox.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

/**
 * The stock CRD converts between v1alpha1 and v1beta1 through the controller's webhook; the bench runs
 * the controller without its webhook server (no certificates on loopback) and uses only v1beta1, the
 * storage version, so the conversion block goes and the API server's default (None) applies.
 */
export function withoutConversionWebhook(crd: string): string {
  const lines = crd.split('\n');
  const start = lines.findIndex((line) => line === '  conversion:');
  if (start < 0) return crd;
  let end = start + 1;
  while (end < lines.length && /^ {3,}\S|^\s*$/.test(lines[end] ?? '')) end++;
  return [...lines.slice(0, start), ...lines.slice(end)].join('\n');
}
