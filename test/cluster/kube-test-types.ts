import { z } from 'zod';
import { ObjectMetaSchema } from '../../crds/index.js';
import type { ResourceType } from '../../crds/index.js';

/**
 * PersistentVolumes stand in for a volume provisioner, which the test cluster lacks: tests and the
 * throughput bench make them pre-bound to one claim each.
 */
export const PersistentVolumeSchema = z.object({
  apiVersion: z.literal('v1'),
  kind: z.literal('PersistentVolume'),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({}),
});
export type PersistentVolume = z.infer<typeof PersistentVolumeSchema>;

export const PersistentVolumeType: ResourceType<PersistentVolume> = {
  group: '',
  version: 'v1',
  kind: 'PersistentVolume',
  plural: 'persistentvolumes',
  namespaced: false,
  hasStatusSubresource: true,
  schema: PersistentVolumeSchema,
};
