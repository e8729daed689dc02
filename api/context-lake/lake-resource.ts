import { HIBERNATED_BY_ANNOTATION, apiVersionOf } from '../../crds/index.js';
import type { OperatingMode } from '../../crds/index.js';
import { CONTEXT_LAKE_NAME, ContextLakeSpecSchema, ContextLakeType } from '../../crds/context-lake/types.js';
import type { ContextLake, ContextLakeSpec, Spicepod } from '../../crds/context-lake/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { Principal } from '../auth/principal.js';
import type { ReadModel } from '../read-model.js';
import { LAKE_LABELS } from './credentials.js';
import { emptyConfig } from './edit-config.js';
import { upsertWithRetry } from '../optimistic-update.js';

/** One ContextLake per organization, in its namespace, named CONTEXT_LAKE_NAME. */

export interface LakeStoreDeps {
  store: ResourceStore;
  readModel: ReadModel;
}

/** The organization's lake as cached (what every read answers from), or undefined before its first write. */
export function cachedLake(readModel: ReadModel, principal: Principal): ContextLake | undefined {
  const lake = readModel.contextLakes.get(principal.namespace, CONTEXT_LAKE_NAME);
  return lake?.metadata.deletionTimestamp === undefined ? lake : undefined;
}

/** The configuration clients see: the lake's, or the empty default named after the organization. */
export const configOf = (principal: Principal, lake: ContextLake | undefined): Spicepod =>
  lake?.spec.config ?? emptyConfig(principal.organization.metadata.name);

/** A new lake: the schema's defaults, the operator's default runtime, hibernated until first used. */
export function newLake(principal: Principal, config: Spicepod, operatingMode: OperatingMode): ContextLake {
  return {
    apiVersion: apiVersionOf(ContextLakeType),
    kind: ContextLakeType.kind,
    metadata: { name: CONTEXT_LAKE_NAME, namespace: principal.namespace, labels: { ...LAKE_LABELS } },
    spec: ContextLakeSpecSchema.parse({ config, operatingMode }),
  };
}

/**
 * Changes the lake's spec with optimistic concurrency; `create` makes the lake when it does not
 * exist yet (undefined: leave it missing). Resolves the lake as written, or undefined.
 */
export async function changeLakeSpec(
  deps: LakeStoreDeps,
  principal: Principal,
  change: (spec: ContextLakeSpec) => ContextLakeSpec | undefined,
  create?: () => ContextLake,
): Promise<ContextLake | undefined> {
  const written = await upsertWithRetry(
    deps.store,
    ContextLakeType,
    principal.namespace,
    CONTEXT_LAKE_NAME,
    (current) => {
      const spec = change(current.spec);
      if (spec === undefined) return undefined;
      const annotations = Object.fromEntries(
        Object.entries(current.metadata.annotations ?? {}).filter(
          ([key]) => key !== HIBERNATED_BY_ANNOTATION,
        ),
      );
      return { ...current, metadata: { ...current.metadata, annotations }, spec };
    },
    create,
  );
  if (written !== undefined) deps.readModel.contextLakes.observe(written);
  return written;
}

/** POST /start, /stop and the SQL call's wake-up: the intent; the operator converges. */
export function setOperatingMode(
  deps: LakeStoreDeps,
  principal: Principal,
  mode: OperatingMode,
): Promise<ContextLake | undefined> {
  const create =
    mode === 'Running'
      ? () => newLake(principal, emptyConfig(principal.organization.metadata.name), 'Running')
      : undefined;
  return changeLakeSpec(
    deps,
    principal,
    (spec) => (spec.operatingMode === mode ? undefined : { ...spec, operatingMode: mode }),
    create,
  );
}
