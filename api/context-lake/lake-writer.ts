import { isDeepStrictEqual } from 'node:util';
import { CONTEXT_LAKE_NAME, ContextLakeType } from '../../crds/context-lake/types.js';
import type { ContextLake, Dataset, Spicepod } from '../../crds/context-lake/types.js';
import type { Connector } from '../../platform/lake-config/dataset-source.js';
import { NotificationsUnavailableError } from '../../platform/lake-notifications/types.js';
import type { NotificationQueues, NotificationSetup } from '../../platform/lake-notifications/types.js';
import type { Logger } from '../../platform/log.js';
import { isStoreError } from '../../platform/store/types.js';
import type { Principal } from '../auth/principal.js';
import { ApiError } from '../errors.js';
import { credentialKeys, extractCredentials, pruneCredentials, storeCredentials } from './credentials.js';
import { emptyConfig, validationFailed } from './edit-config.js';
import type { ConfigEdit } from './edit-config.js';
import { newLake } from './lake-resource.js';
import type { LakeStoreDeps } from './lake-resource.js';
import { fileRootIssues, literalCredentialKeys, validateEdit } from './validate-config.js';

const ATTEMPTS = 8;

export interface LakeWriterDeps extends LakeStoreDeps {
  connectors: ReadonlySet<Connector>;
  /** Directories an organization's file:// datasets may read below (none: no file:// dataset is accepted). */
  fileRootsOf: (namespace: string) => readonly string[];
  /** Undefined: this installation has no SQS, so no dataset may ask for notifications. */
  queues: NotificationQueues | undefined;
  logger: Logger;
  now: () => Date;
}

export interface SavedConfig {
  lake: ContextLake;
  /** The configuration as stored: credentials as `${secrets:...}` references. */
  config: Spicepod;
  /** Set-up answers for the saved datasets with notifications, by dataset name. */
  notifications: Record<string, NotificationSetup>;
}

/**
 * Writes to an organization's lake configuration, all or nothing (docs/api.md#context-lake): validate the
 * edit's result; ensure the notification queue; write new credential values into the Secret; then
 * replace the ContextLake with the resourceVersion it was computed from (a lost race recomputes the
 * edit on the fresh configuration, so no concurrent change is lost); last, prune credentials no
 * longer referenced. Writes of one organization are serialized in this process, so two requests
 * of this replica never race on a credential key.
 */
export class LakeWriter {
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: LakeWriterDeps) {}

  save(principal: Principal, edit: (config: Spicepod) => ConfigEdit): Promise<SavedConfig> {
    return this.serialized(principal.namespace, () => this.saveNow(principal, edit));
  }

  private async serialized<T>(namespace: string, work: () => Promise<T>): Promise<T> {
    const before = this.tails.get(namespace) ?? Promise.resolve();
    const result = before.then(work, work);
    const tail = result.catch(() => undefined);
    this.tails.set(namespace, tail);
    try {
      return await result;
    } finally {
      if (this.tails.get(namespace) === tail) this.tails.delete(namespace);
    }
  }

  private async saveNow(principal: Principal, edit: (config: Spicepod) => ConfigEdit): Promise<SavedConfig> {
    const { store } = this.deps;
    let notifications: Record<string, NotificationSetup> | undefined;
    for (let attempt = 1; ; attempt++) {
      const lake = await store.get(ContextLakeType, principal.namespace, CONTEXT_LAKE_NAME);
      const current = lake?.spec.config ?? emptyConfig(principal.organization.metadata.name);
      const changed = edit(current);
      await this.validate(principal, changed);
      notifications ??= await this.setUpNotifications(
        principal,
        changed.datasets.map((s) => s.item),
      );
      const { config, values } = extractCredentials(changed.config);
      let saved: ContextLake | undefined;
      try {
        saved = await this.commit(principal, lake, config, values);
      } finally {
        // Also after a lost race or a failure: values written for a configuration never stored go.
        await this.prune(principal, Object.keys(values));
      }
      if (saved !== undefined) return { lake: saved, config, notifications };
      if (attempt >= ATTEMPTS)
        throw new ApiError('conflict', 'The configuration kept changing meanwhile; try again');
    }
  }

  private async validate(principal: Principal, edit: ConfigEdit): Promise<void> {
    const stored = await credentialKeys(this.deps.store, principal.namespace);
    const incoming = literalCredentialKeys(edit.datasets.map((saved) => saved.item));
    const issues = validateEdit(edit, {
      connectors: this.deps.connectors,
      secretKeys: new Set([...stored, ...incoming]),
      notificationsAvailable: this.deps.queues !== undefined,
    });
    issues.push(
      ...(await fileRootIssues(edit, {
        connectors: this.deps.connectors,
        fileRoots: this.deps.fileRootsOf(principal.namespace),
      })),
    );
    if (issues.length > 0) throw validationFailed(issues);
  }

  private async setUpNotifications(
    principal: Principal,
    datasets: readonly Dataset[],
  ): Promise<Record<string, NotificationSetup>> {
    const wanted = datasets.filter((dataset) => dataset.notifications === true);
    const queues = this.deps.queues;
    if (wanted.length === 0 || queues === undefined) return {};
    try {
      const queue = await queues.ensureQueue(principal.namespace);
      return Object.fromEntries(
        wanted.map((dataset) => [dataset.name, queues.setupFor(queue, dataset.from)]),
      );
    } catch (err) {
      if (!(err instanceof NotificationsUnavailableError)) throw err;
      this.deps.logger.warn({ err, namespace: principal.namespace }, 'the notification queue is unavailable');
      throw new ApiError(
        'service_unavailable',
        'The notification queue cannot be set up now; try again',
        undefined,
        {
          cause: err,
        },
      );
    }
  }

  /** Stores the configuration; undefined when another writer won the race (the caller recomputes). */
  private async commit(
    principal: Principal,
    found: ContextLake | undefined,
    config: Spicepod,
    values: Record<string, string>,
  ): Promise<ContextLake | undefined> {
    const { store, readModel } = this.deps;
    try {
      // The Secret is owned by the lake, so the lake comes first: created with the empty default.
      const lake =
        found ??
        (await store.create(ContextLakeType, newLake(principal, emptyConfig(config.name), 'Hibernated')));
      readModel.contextLakes.observe(lake);
      await storeCredentials(store, lake, values, this.deps.now());
      if (isDeepStrictEqual(lake.spec.config, config)) return lake;
      const saved = await store.replace(ContextLakeType, { ...lake, spec: { ...lake.spec, config } });
      readModel.contextLakes.observe(saved);
      return saved;
    } catch (err) {
      if (isStoreError(err, 'Conflict') || isStoreError(err, 'AlreadyExists')) return undefined;
      throw err;
    }
  }

  private async prune(principal: Principal, own: readonly string[]): Promise<void> {
    try {
      await pruneCredentials(this.deps.store, principal.namespace, CONTEXT_LAKE_NAME, own, this.deps.now());
    } catch (err) {
      // Unused values stay in the Secret until the next write prunes them; the save itself stands.
      this.deps.logger.warn(
        { err, namespace: principal.namespace },
        'pruning unused lake credentials failed',
      );
    }
  }
}
