import { z } from 'zod';
import { CONTEXT_LAKE_SECRET_NAME, ContextLakeType } from '../../crds/context-lake/types.js';
import type { ContextLake, Dataset, Spicepod } from '../../crds/context-lake/types.js';
import { SecretType, apiVersionOf, secretData } from '../../crds/index.js';
import type { Secret } from '../../crds/index.js';
import {
  SECRET_PARAMS,
  secretReference,
  secretReferenceOf,
} from '../../platform/lake-config/dataset-source.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { upsertWithRetry } from '../optimistic-update.js';
import { credentialKey } from './validate-config.js';

/**
 * Dataset credentials (docs/api.md#context-lake): literal values of SECRET_PARAMS never reach the
 * ContextLake, a response or a log. They move into the lake's Secret under `<dataset>.<param>`,
 * and the configuration keeps `${secrets:<key>}` in their place.
 */

const SECRET_TYPE = 'agentry.dev/context-lake-credentials';
export const LAKE_LABELS = { 'app.kubernetes.io/managed-by': 'agentry', 'agentry.dev/context-lake': 'true' };

function withReferences(dataset: Dataset, values: Record<string, string>): Dataset {
  if (dataset.params === undefined) return dataset;
  const params: Record<string, string> = {};
  for (const [param, value] of Object.entries(dataset.params)) {
    if (!SECRET_PARAMS.has(param) || secretReferenceOf(value) !== undefined) {
      params[param] = value;
      continue;
    }
    const key = credentialKey(dataset.name, param);
    values[key] = value;
    params[param] = secretReference(key);
  }
  return { ...dataset, params };
}

/** Splits a configuration into what may be stored (references only) and the credential values. */
export function extractCredentials(config: Spicepod): { config: Spicepod; values: Record<string, string> } {
  const values: Record<string, string> = {};
  const datasets = config.datasets.map((dataset) => withReferences(dataset, values));
  return { config: { ...config, datasets }, values };
}

/** Every Secret key a configuration refers to. */
export function referencedKeys(config: Spicepod): Set<string> {
  const keys = new Set<string>();
  for (const dataset of config.datasets)
    for (const value of Object.values(dataset.params ?? {})) {
      const key = secretReferenceOf(value);
      if (key !== undefined) keys.add(key);
    }
  return keys;
}

/** The Secret's keys (never its values: this is all validation needs). */
export async function credentialKeys(store: ResourceStore, namespace: string): Promise<Set<string>> {
  const secret = await store.get(SecretType, namespace, CONTEXT_LAKE_SECRET_NAME);
  return new Set(Object.keys(secret?.data ?? {}));
}

/**
 * Keys written by a save that has not stored its configuration yet, with when: a save on another
 * replica may be between writing its values and storing the configuration that refers to them,
 * and pruning must not take those. A save clears its stamps once it is through; a stamp left by a
 * save that died expires after PENDING_GRACE_MS.
 */
const PENDING_ANNOTATION = 'agentry.dev/pending-credentials';
const PendingSchema = z.record(z.string(), z.iso.datetime({ offset: true }));
export const PENDING_GRACE_MS = 10 * 60_000;

interface Credentials {
  /** Secret data: base64 values by key. */
  data: Record<string, string>;
  /** Keys written by saves still in progress → when. */
  pending: Record<string, string>;
}

function credentialsOf(secret: Secret | undefined): Credentials {
  const raw = secret?.metadata.annotations?.[PENDING_ANNOTATION];
  let pending: Record<string, string> = {};
  if (raw !== undefined) {
    try {
      pending = PendingSchema.parse(JSON.parse(raw));
    } catch {
      pending = {}; // unreadable: nothing is protected, the worst case is one dangling reference
    }
  }
  return { data: { ...secret?.data }, pending };
}

/** Owned by the lake, so that deleting the lake garbage-collects its credentials. */
function ownedBy(lake: ContextLake, credentials: Credentials, base?: Secret): Secret {
  const uid = lake.metadata.uid;
  if (uid === undefined) throw new Error('the store returned a context lake without a uid');
  const annotations = { ...base?.metadata.annotations };
  if (Object.keys(credentials.pending).length === 0) Reflect.deleteProperty(annotations, PENDING_ANNOTATION);
  else annotations[PENDING_ANNOTATION] = JSON.stringify(credentials.pending);
  return {
    ...base,
    apiVersion: 'v1',
    kind: 'Secret',
    type: base?.type ?? SECRET_TYPE,
    metadata: {
      ...base?.metadata,
      name: CONTEXT_LAKE_SECRET_NAME,
      namespace: lake.metadata.namespace,
      labels: { ...base?.metadata.labels, ...LAKE_LABELS },
      annotations,
      ownerReferences: [
        {
          apiVersion: apiVersionOf(ContextLakeType),
          kind: ContextLakeType.kind,
          name: lake.metadata.name,
          uid,
        },
      ],
    },
    data: credentials.data,
  };
}

/**
 * Read-modify-write of the Secret with optimistic concurrency (created when missing): `change`
 * maps the current credentials to the new (undefined: nothing to do). A lost race starts over from
 * a fresh read.
 */
async function updateSecret(
  store: ResourceStore,
  lake: ContextLake,
  change: (credentials: Credentials) => Credentials | undefined,
): Promise<void> {
  const next = (current: Secret | undefined): Secret | undefined => {
    const credentials = change(credentialsOf(current));
    return credentials === undefined ? undefined : ownedBy(lake, credentials, current);
  };
  try {
    await upsertWithRetry(store, SecretType, lake.metadata.namespace, CONTEXT_LAKE_SECRET_NAME, next, () =>
      next(undefined),
    );
  } catch (err) {
    throw new Error('writing the context lake credentials', { cause: err });
  }
}

/** Merges new credential values into the lake's Secret, before the configuration refers to them. */
export async function storeCredentials(
  store: ResourceStore,
  lake: ContextLake,
  values: Record<string, string>,
  now: Date,
): Promise<void> {
  if (Object.keys(values).length === 0) return;
  const encoded = secretData(values);
  const stamps = Object.fromEntries(Object.keys(values).map((key) => [key, now.toISOString()]));
  await updateSecret(store, lake, ({ data, pending }) => ({
    data: { ...data, ...encoded },
    pending: { ...pending, ...stamps },
  }));
}

/**
 * After a save: drops the keys the lake's stored configuration (read afresh) no longer refers to,
 * except those another save is still writing; `own` are the keys this save wrote, now settled.
 */
export async function pruneCredentials(
  store: ResourceStore,
  namespace: string,
  name: string,
  own: readonly string[],
  now: Date,
): Promise<void> {
  const lake = await store.get(ContextLakeType, namespace, name);
  if (lake === undefined) return; // its Secret goes with it (owner reference)
  const used = referencedKeys(lake.spec.config);
  const settled = new Set(own);
  const inProgress = (key: string, pending: Record<string, string>): boolean => {
    const since = pending[key];
    return !settled.has(key) && since !== undefined && now.getTime() - Date.parse(since) < PENDING_GRACE_MS;
  };
  await updateSecret(store, lake, ({ data, pending }) => {
    const keep = (key: string): boolean => used.has(key) || inProgress(key, pending);
    const kept = Object.fromEntries(Object.entries(data).filter(([key]) => keep(key)));
    const stillPending = Object.fromEntries(
      Object.entries(pending).filter(([key]) => key in kept && inProgress(key, pending)),
    );
    const unchanged =
      Object.keys(kept).length === Object.keys(data).length &&
      Object.keys(stillPending).length === Object.keys(pending).length;
    return unchanged ? undefined : { data: kept, pending: stillPending };
  });
}
