import type { Dataset, Spicepod } from '../crds/context-lake/types.js';
import type { Connector, DatasetSource } from '../platform/lake-config/dataset-source.js';
import type { LakeDatasetState, LakeStatus, ObjectChange, RefreshMode } from '../platform/lake-protocol.js';
import type { Logger } from '../platform/log.js';
import { definitionDigest, storedState } from './catalog.js';
import { definitionOf, sourceOf } from './dataset-definition.js';
import type { Catalog, StoredObject } from './catalog.js';
import type { LakeEngine } from './engine.js';
import { messageOf, withoutServerPaths } from './errors.js';
import { refreshDataset } from './refresh.js';
import { keyChangesOf } from './refresh-plan.js';
import { RefreshQueue } from './refresh-queue.js';
import type { RefreshWork } from './refresh.js';
import type { SourceContext } from './sources/index.js';
import { dropDatasetStatements } from './tables.js';
import { clip, dropUnwantedViews, recreateViews } from './views.js';
import type { ViewState } from './views.js';

/**
 * The lake's configuration and what it holds. Config pushes and refreshes only record what is
 * wanted and answer at once; one background loop converges on it, a dataset at a time: removed
 * datasets are dropped, new and changed ones loaded (and failed ones retried), refreshes and
 * object changes applied, then the views recreated. A newer push re-plans between refreshes and
 * abandons one it makes obsolete, so the loop always ends at the newest config. Queries keep
 * reading the committed tables throughout. The tables live in the database file: after a restart
 * the datasets whose definition the first config still has are served at once and checked against
 * their sources in the background (`wake`).
 */

export interface LakeOptions {
  engine: LakeEngine;
  /** What the database file holds (opened before the lake). */
  catalog: Catalog;
  connectors: ReadonlySet<Connector>;
  /** File roots and the outbound policy every load obeys. */
  sources: SourceContext;
  logger: Logger;
  now?: () => Date;
}

interface Desired {
  generation: number;
  config: Spicepod;
  revision: string | undefined;
}

type Phase = LakeDatasetState['status'];

export class Lake {
  private desired: Desired | undefined;
  private appliedGeneration: number | undefined;
  private configChanged = false;
  private viewsStale = false;
  /** The first config after a start checks the datasets the file already holds. */
  private woken = false;
  private readonly refreshes = new RefreshQueue();
  private readonly phases = new Map<string, { phase: Phase; error?: string }>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private views: Record<string, ViewState> = {};
  private current: { name: string; definition: string; abort: AbortController } | undefined;
  private work: Promise<void> | undefined;
  private lastQueryAt: string | undefined;
  private closed = false;
  private readonly now: () => Date;

  constructor(private readonly options: LakeOptions) {
    this.now = options.now ?? (() => new Date());
  }

  /** True once a config was pushed or the file holds datasets: before that, SQL answers 503 not_loaded. */
  get configured(): boolean {
    return this.desired !== undefined || this.options.catalog.names().length > 0;
  }

  noteQuery(): void {
    this.lastQueryAt = this.now().toISOString();
  }

  status(): LakeStatus {
    const names =
      this.desired?.config.datasets.map((dataset) => dataset.name) ?? this.options.catalog.names();
    return {
      generation: this.appliedGeneration ?? this.desired?.generation ?? null,
      revision: this.desired?.revision ?? null,
      loading: this.work !== undefined,
      datasets: Object.fromEntries(names.map((name) => [name, this.stateOf(name)])),
      views: { ...this.views },
      ...(this.lastQueryAt === undefined ? {} : { lastQueryAt: this.lastQueryAt }),
    };
  }

  private stateOf(name: string): LakeDatasetState {
    const stored = this.options.catalog.get(name);
    const { phase, error } = this.phases.get(name) ?? { phase: stored === undefined ? 'pending' : 'ready' };
    return {
      status: phase,
      ...(error === undefined ? {} : { error }),
      ...(stored === undefined ? {} : storedState(stored)),
    };
  }

  /** The config's datasets that can load, with their sources. */
  datasetSources(): { name: string; source: DatasetSource }[] {
    const config = this.desired?.config;
    const sources: { name: string; source: DatasetSource }[] = [];
    for (const dataset of config?.datasets ?? []) {
      const parsed = sourceOf(config, dataset, this.options.connectors);
      if ('source' in parsed) sources.push({ name: dataset.name, source: parsed.source });
    }
    return sources;
  }

  /** The object `key` of a dataset as the table holds it now. */
  storedObject(name: string, key: string): StoredObject | undefined {
    return this.options.catalog.get(name)?.objects.get(key);
  }

  /** The error of the dataset's last refresh, if it failed. */
  failureOf(name: string): string | undefined {
    return this.phases.get(name)?.error;
  }

  /** `dataAsOf` of each named dataset the file holds. */
  dataAsOf(names: Iterable<string>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const name of names) {
      const stored = this.options.catalog.get(name);
      if (stored !== undefined) out[name] = stored.dataAsOf;
    }
    return out;
  }

  /** Takes a new config; loading happens in the background. */
  applyConfig(generation: number, config: Spicepod, revision?: string): LakeStatus {
    this.desired = { generation, config, revision };
    this.configChanged = true;
    const wanted = new Map(config.datasets.map((dataset) => [dataset.name, dataset]));
    for (const name of [...this.phases.keys()]) if (!wanted.has(name)) this.phases.delete(name);
    const waking = !this.woken;
    this.woken = true;
    for (const dataset of config.datasets) this.markChanged(dataset, waking);
    const { current } = this;
    if (current !== undefined) {
      const next = wanted.get(current.name);
      if (next === undefined || definitionDigest(definitionOf(next)) !== current.definition)
        current.abort.abort();
    }
    this.kick();
    return this.status();
  }

  /**
   * A dataset the file does not hold as the config defines it is loaded; one it holds stays
   * `ready` (and is checked in the background after a start).
   */
  private markChanged(dataset: Dataset, waking: boolean): void {
    const definition = definitionDigest(definitionOf(dataset));
    const { current } = this;
    if (current?.name === dataset.name && current.definition === definition) return; // loading it now
    if (this.options.catalog.get(dataset.name)?.definition !== definition || this.failureOf(dataset.name))
      this.queue(dataset.name, { full: true, check: false, changes: [], trigger: 'load' });
    else if (waking) this.queue(dataset.name, { full: false, check: true, changes: [], trigger: 'wake' });
  }

  /**
   * Queues refreshes of the named datasets: `full` reloads, `auto` applies the given object
   * changes or, without any, compares the source with the table. Answers the names it knows.
   */
  refresh(
    names: readonly string[],
    mode: RefreshMode = 'auto',
    changes: readonly ObjectChange[] = [],
  ): string[] {
    const known = new Set(this.desired?.config.datasets.map((dataset) => dataset.name));
    const accepted = [...new Set(names)].filter((name) => known.has(name));
    const buckets = new Map<string, string>();
    for (const { name, source } of this.datasetSources())
      if (source.connector === 's3') buckets.set(name, source.bucket);
    for (const name of accepted) {
      const mine = keyChangesOf(name, buckets.get(name), changes);
      if (mode === 'full') this.queue(name, { full: true, check: false, changes: [], trigger: 'request' });
      else if (mine.length > 0)
        this.queue(name, { full: false, check: false, changes: mine, trigger: 'event' });
      else this.queue(name, { full: false, check: true, changes: [], trigger: 'request' });
    }
    if (accepted.length > 0) this.kick();
    return accepted;
  }

  /** Looks at one object of a dataset at its source and applies it; resolves when that was tried. */
  ensureObject(name: string, key: string): Promise<void> {
    return new Promise((resolve) => {
      this.queue(
        name,
        { full: false, check: false, changes: [{ key, event: 'created' }], trigger: 'request' },
        resolve,
      );
      this.kick();
    });
  }

  /** Stops loading (the load in progress is abandoned) and waits for the loop to end. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers.values()) clearInterval(timer);
    this.timers.clear();
    this.current?.abort.abort();
    await this.work;
    this.refreshes.clear();
  }

  private queue(name: string, work: RefreshWork, waiter?: () => void): void {
    this.refreshes.add(name, work, waiter);
    this.showQueued(name, work);
  }

  /** Loads and asked-for refreshes show; background checks and events leave a dataset `ready`. */
  private showQueued(name: string, work: RefreshWork): void {
    const stored = this.options.catalog.get(name) !== undefined;
    if (!stored) {
      if (this.current?.name !== name) this.phases.set(name, { phase: 'pending' });
      return;
    }
    const shown = work.full || (work.trigger === 'request' && work.changes.length === 0);
    if (shown) this.phases.set(name, { phase: 'refreshing' });
  }

  private kick(): void {
    if (this.work !== undefined || this.closed) return;
    this.work = this.converge()
      .catch((err: unknown) => {
        this.options.logger.error(
          { err: withoutServerPaths(messageOf(err)) },
          'the lake stopped loading after an unexpected error',
        );
      })
      .finally(() => {
        this.work = undefined;
      });
  }

  private async converge(): Promise<void> {
    while (!this.closed) {
      const next = this.refreshes.next();
      if (this.configChanged) await this.plan();
      else if (next !== undefined) await this.process(next);
      else if (this.viewsStale) await this.applyViews();
      else return;
    }
  }

  /**
   * Drops what the newest config removed (views first, so a dataset may take a removed view's
   * name) and sets the timers of interval checks.
   */
  private async plan(): Promise<void> {
    this.configChanged = false;
    this.viewsStale = true;
    const { engine, catalog, logger } = this.options;
    await dropUnwantedViews(engine, this.desired?.config);
    const datasets = this.desired?.config.datasets ?? [];
    const wanted = new Set(datasets.map((dataset) => dataset.name));
    this.refreshes.keepOnly(wanted);
    for (const name of catalog.names()) {
      if (wanted.has(name)) continue;
      await engine.transaction([...dropDatasetStatements(name), ...catalog.dropStatements(name)]);
      catalog.forget(name);
      logger.info({ dataset: name }, 'dataset removed');
    }
    this.scheduleChecks();
  }

  /** One timer per dataset with refresh_check_interval: an `auto` check each time it fires. */
  private scheduleChecks(): void {
    for (const timer of this.timers.values()) clearInterval(timer);
    this.timers.clear();
    for (const { name, source } of this.datasetSources()) {
      if (source.checkIntervalMs === undefined) continue;
      const timer = setInterval(() => {
        if (this.refreshes.checkQueued(name)) return;
        this.queue(name, { full: false, check: true, changes: [], trigger: 'interval' });
        this.kick();
      }, source.checkIntervalMs);
      timer.unref();
      this.timers.set(name, timer);
    }
  }

  private async process(name: string): Promise<void> {
    const entry = this.refreshes.take(name);
    if (entry === undefined) return;
    try {
      await this.refreshOne(name, entry);
    } finally {
      for (const wake of entry.waiters) wake();
    }
  }

  private async refreshOne(name: string, work: RefreshWork): Promise<void> {
    const dataset = this.desired?.config.datasets.find((candidate) => candidate.name === name);
    if (dataset === undefined) return; // removed since it was queued
    const parsed = sourceOf(this.desired?.config, dataset, this.options.connectors);
    if ('error' in parsed) {
      this.fail(name, parsed.error);
      return;
    }
    const definition = definitionDigest(definitionOf(dataset));
    const stored = this.options.catalog.get(name);
    if (stored === undefined) this.phases.set(name, { phase: 'loading' });
    else if (stored.definition !== definition) this.phases.set(name, { phase: 'refreshing' });
    const abort = new AbortController();
    this.current = { name, definition, abort };
    try {
      const context = { ...this.options, now: this.now };
      const next = await refreshDataset(context, name, definition, parsed.source, work, abort.signal);
      this.phases.set(name, { phase: 'ready' });
      if (next.lastRefresh?.kind === 'full') this.viewsStale = true;
      this.options.logger.info({ dataset: name, ...next.lastRefresh }, 'dataset refreshed');
    } catch (err) {
      // Abandoned for a newer config (which re-planned it) or a shutdown: not a failure.
      if (abort.signal.aborted) return;
      this.fail(name, messageOf(err));
    } finally {
      this.current = undefined;
    }
  }

  /** Records a failed refresh; the data loaded before, if any, is still served. */
  private fail(name: string, message: string): void {
    const error = clip(`dataset ${name}: ${message}`);
    this.phases.set(name, { phase: 'error', error });
    this.options.logger.warn({ dataset: name, error }, 'dataset failed to load');
  }

  private async applyViews(): Promise<void> {
    this.viewsStale = false;
    const desired = this.desired;
    if (desired === undefined) return;
    this.views = await recreateViews(this.options.engine, desired.config);
    if (!this.configChanged) this.appliedGeneration = desired.generation;
  }
}
