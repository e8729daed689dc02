import { randomBytes } from 'node:crypto';
import {
  AgentComputerSpecSchema,
  AgentComputerType,
  newWorkspaceAnnotations,
  MANAGED_BY_LABEL,
  POOL_IDLE_TIMEOUT_ANNOTATION,
  POOL_LABEL,
  POOL_MEMBER_STATE_LABEL,
  PoolMemberStates,
  apiVersionOf,
} from '../../crds/index.js';
import type { AgentComputer, WorkspacePool } from '../../crds/index.js';
import { controllerReference } from '../runtimes/ensure-object.js';

/** What a member is called until it is claimed and named by its claimer (the REST `name`). */
export const MEMBER_DISPLAY_NAME = 'Warm workspace';

const SUFFIX_LENGTH = 5;
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789'; // as Kubernetes' generateName: no vowels, no look-alikes
/** A member's name is a DNS label: the pool's part is cut so `<pool>-<suffix>` fits 63. */
const MAX_NAME = 63;

/** Five random characters, as Kubernetes' generateName appends. */
export function randomSuffix(): string {
  return [...randomBytes(SUFFIX_LENGTH)]
    .map((byte) => SUFFIX_ALPHABET[byte % SUFFIX_ALPHABET.length])
    .join('');
}

/**
 * `<pool>-<suffix>` as an RFC 1123 label (a member's name is its REST id, and names the Pod, Service
 * and disk made for it): dots become dashes, and a long pool name is cut.
 */
export function memberName(pool: string, suffix: string): string {
  const head = pool
    .replace(/\./g, '-')
    .slice(0, MAX_NAME - suffix.length - 1)
    .replace(/-+$/, '');
  return `${head}-${suffix}`;
}

/**
 * A new member of `pool`: an AgentComputer of the template's runtime and resources, owned by the
 * pool (deleting the pool deletes the members nobody claimed), `available`, never idling while it
 * waits (idleTimeout 0s; the claim writes the template's from the annotation).
 */
export function poolMember(pool: WorkspacePool, suffix: string): AgentComputer {
  const { template } = pool.spec;
  return {
    apiVersion: apiVersionOf(AgentComputerType),
    kind: AgentComputerType.kind,
    metadata: {
      name: memberName(pool.metadata.name, suffix),
      namespace: pool.metadata.namespace,
      labels: {
        [POOL_LABEL]: pool.metadata.name,
        [POOL_MEMBER_STATE_LABEL]: PoolMemberStates.Available,
        [MANAGED_BY_LABEL]: 'agentry',
      },
      annotations: { ...newWorkspaceAnnotations(), [POOL_IDLE_TIMEOUT_ANNOTATION]: template.idleTimeout },
      ownerReferences: [controllerReference(pool)],
    },
    spec: AgentComputerSpecSchema.parse({
      displayName: MEMBER_DISPLAY_NAME,
      idleTimeout: '0s',
      ...(template.runtime === undefined ? {} : { runtime: template.runtime }),
      ...(template.resources === undefined ? {} : { resources: template.resources }),
    }),
  };
}
