// The custom resource the store conformance suite writes. Kept apart from the suite (which imports
// @jest/globals) so the cluster harness can install its CRD outside a test environment.
import { z } from 'zod';
import { defineCustomResource } from '../../crds/resource.js';
import type { CustomResource } from '../../crds/resource.js';

export const ProbeSpecSchema = z.object({ size: z.number(), note: z.string().optional() });
export const ProbeStatusSchema = z.object({ phase: z.string().optional(), observed: z.number().optional() });
export type ProbeSpec = z.infer<typeof ProbeSpecSchema>;
export type ProbeStatus = z.infer<typeof ProbeStatusSchema>;

/** The custom resource of the conformance suite: namespaced, with spec, and status as a subresource. */
export const ProbeType = defineCustomResource({
  group: 'agentry.dev',
  version: 'v1alpha1',
  kind: 'Probe',
  plural: 'probes',
  singular: 'probe',
  namespaced: true,
  shortNames: [],
  description: 'Test resource of the resource store conformance suite.',
  spec: ProbeSpecSchema,
  status: ProbeStatusSchema,
  printerColumns: [],
});
export type Probe = CustomResource<ProbeSpec, ProbeStatus>;
