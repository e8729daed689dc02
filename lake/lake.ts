import type { Dataset, Spicepod, View } from '../crds/context-lake/types.js';
import { parseDatasetSource } from '../platform/lake-config/dataset-source.js';
import type { Connector, DatasetSource } from '../platform/lake-config/dataset-source.js';
import type { LakeDatasetState, LakeStatus } from '../platform/lake-protocol.js';
import type { Logger } from '../platform/log.js';
import type { LakeEngine } from './engine.js';
import { messageOf, withoutServerPaths } from './errors.js';
import { loadDataset } from './load.js';
import type { SourceContext } from './sources/index.js';

/**
 * The lake's configuration and what it has loaded. Config pushes and refreshes only record what
 * is wanted and answer at once; one background loop converges on it, a dataset at a time:
 * removed datasets are dropped, new and changed ones loaded (and failed ones retried), then the
 * views recreated. A newer push re-plans between loads and abandons a load it makes obsolete,
 * so the loop always ends at the newest config. Queries keep reading the old tables throughout.
 */

export interface LakeOptions {
  engine: LakeEngine;
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

type ViewState = LakeStatus['views'][string];

/** What makes a dataset's data: its source and params (not `notifications`, which only routes events). */
export function definitionOf(dataset: Dataset): string {
  const params = Object.entries(dataset.params ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([dataset.from, params]);
}

/**
 * A message for a dataset's or a view's status: no server path, and well within the ContextLake
 * status limit (4 KiB a message).
 */
function clip(text: string): string {
  const message = withoutServerPaths(text);
  return message.length > 2000 ? `${message.slice(0, 1997)}...` : message;
}

export class Lake {
  private desired: Desired | undefined;
  private appliedGeneration: number | undefined;
  private configChanged = false;
  private viewsStale = false;
  /** Datasets to load for the current plan, in config order. */
  private planned: string[] = [];
  private readonly refreshes = new Set<string>();
  /** Definition of the data each table now holds. */
  private readonly loaded = new Map<string, string>();
  private readonly datasets = new Map<string, LakeDatasetState>();
  private views: Record<string, ViewState> = {};
  private current: { name: string; definition: string; abort: AbortController } | undefined;
  private work: Promise<void> | undefined;
  private lastQueryAt: string | undefined;
  private closed = false;
  private readonly now: () => Date;

  constructor(private readonly options: LakeOptions) {
    this.now = options.now ?? (() => new Date());
  }

  /** True once a config was pushed: before that, SQL answers 503 not_loaded. */
  get configured(): boolean {
    return this.desired !== undefined;
  }

  noteQuery(): void {
    this.lastQueryAt = this.now().toISOString();
  }

  status(): LakeStatus {
    return {
      generation: this.appliedGeneration ?? this.desired?.generation ?? null,
      revision: this.desired?.revision ?? null,
      loading: this.work !== undefined,
      datasets: Object.fromEntries(this.datasets),
      views: { ...this.views },
      ...(this.lastQueryAt === undefined ? {} : { lastQueryAt: this.lastQueryAt }),
    };
  }

  /** Takes a new config; loading happens in the background. */
  applyConfig(generation: number, config: Spicepod, revision?: string): LakeStatus {
    this.desired = { generation, config, revision };
    this.configChanged = true;
    const wanted = new Map(config.datasets.map((dataset) => [dataset.name, dataset]));
    for (const name of [...this.datasets.keys()]) if (!wanted.has(name)) this.datasets.delete(name);
    for (const dataset of config.datasets) this.markChanged(dataset);
    const { current } = this;
    if (current !== undefined) {
      const next = wanted.get(current.name);
      if (next === undefined || definitionOf(next) !== current.definition) current.abort.abort();
    }
    this.kick();
    return this.status();
  }

  /** A dataset the new config needs loaded waits; one served as it is now stays `ready`. */
  private markChanged(dataset: Dataset): void {
    const definition = definitionOf(dataset);
    const unchanged = this.loaded.get(dataset.name) === definition;
    if (unchanged && this.datasets.get(dataset.name)?.status === 'ready') return;
    const { current } = this;
    if (current?.name === dataset.name && current.definition === definition) return; // loading it now
    this.datasets.set(dataset.name, this.waiting(dataset.name));
  }

  /** Queues reloads of the named datasets; answers the names it knows. */
  refresh(names: readonly string[]): string[] {
    const known = new Set(this.desired?.config.datasets.map((dataset) => dataset.name));
    const accepted = [...new Set(names)].filter((name) => known.has(name));
    for (const name of accepted) {
      this.refreshes.add(name);
      const state = this.datasets.get(name);
      if (state?.status !== 'loading') this.datasets.set(name, this.waiting(name));
    }
    if (accepted.length > 0) this.kick();
    return accepted;
  }

  /** Stops loading (the load in progress is abandoned) and waits for the loop to end. */
  async close(): Promise<void> {
    this.closed = true;
    this.current?.abort.abort();
    await this.work;
  }

  /** `refreshing` while old data is served, `pending` when there is none yet. */
  private waiting(name: string): LakeDatasetState {
    const state = this.datasets.get(name);
    if (!this.loaded.has(name)) return { status: 'pending' };
    return { ...state, status: 'refreshing', error: undefined };
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
      if (this.configChanged) await this.plan();
      else if (this.planned.length > 0) await this.load(this.planned.shift() ?? '');
      else if (this.refreshes.size > 0) await this.load(this.takeRefresh());
      else if (this.viewsStale) await this.recreateViews();
      else return;
    }
  }

  private takeRefresh(): string {
    const [name = ''] = this.refreshes;
    this.refreshes.delete(name);
    return name;
  }

  /**
   * Drops what the newest config removed (views first, so a dataset may take a removed view's
   * name) and lists what it needs loaded.
   */
  private async plan(): Promise<void> {
    this.configChanged = false;
    this.viewsStale = true;
    await this.dropUnwantedViews();
    const datasets = this.desired?.config.datasets ?? [];
    const wanted = new Set(datasets.map((dataset) => dataset.name));
    for (const name of [...this.loaded.keys()]) {
      if (wanted.has(name)) continue;
      await this.options.engine.dropTable(name);
      this.loaded.delete(name);
      this.options.logger.info({ dataset: name }, 'dataset removed');
    }
    this.planned = datasets
      .filter((dataset) => this.datasets.get(dataset.name)?.status !== 'ready')
      .map((dataset) => dataset.name);
  }

  private sourceOf(dataset: Dataset, taken: Set<string>): { source: DatasetSource } | { error: string } {
    const folded = dataset.name.toLowerCase();
    if (taken.has(folded))
      return { error: `the name ${dataset.name} is already used by another dataset (SQL names ignore case)` };
    const parsed = parseDatasetSource(dataset, { connectors: this.options.connectors });
    if (!parsed.ok)
      return { error: parsed.issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ') };
    return { source: parsed.source };
  }

  /** Datasets before this one in the config, by SQL name: a later one with the same name cannot load. */
  private namesBefore(name: string): Set<string> {
    const names = new Set<string>();
    for (const dataset of this.desired?.config.datasets ?? []) {
      if (dataset.name === name) break;
      names.add(dataset.name.toLowerCase());
    }
    return names;
  }

  private async load(name: string): Promise<void> {
    const dataset = this.desired?.config.datasets.find((candidate) => candidate.name === name);
    if (dataset === undefined) return; // removed since it was queued
    this.refreshes.delete(name); // this load serves a refresh asked for before it started
    const parsed = this.sourceOf(dataset, this.namesBefore(name));
    if ('error' in parsed) {
      this.fail(name, parsed.error);
      return;
    }
    const definition = definitionOf(dataset);
    const previous = this.datasets.get(name);
    this.datasets.set(
      name,
      this.loaded.has(name) ? { ...previous, status: 'refreshing', error: undefined } : { status: 'loading' },
    );
    const abort = new AbortController();
    this.current = { name, definition, abort };
    const started = performance.now();
    try {
      const rowCount = await loadDataset(
        this.options.engine,
        name,
        parsed.source,
        this.options.sources,
        abort.signal,
      );
      this.loaded.set(name, definition);
      this.datasets.set(name, { status: 'ready', rowCount, loadedAt: this.now().toISOString() });
      this.viewsStale = true;
      const ms = Math.round(performance.now() - started);
      this.options.logger.info({ dataset: name, rowCount, ms }, 'dataset loaded');
    } catch (err) {
      // Abandoned for a newer config (which re-planned it) or a shutdown: not a failure.
      if (abort.signal.aborted) return;
      this.fail(name, messageOf(err));
    } finally {
      this.current = undefined;
    }
  }

  /** Records a failed load; the data loaded before, if any, is still served. */
  private fail(name: string, message: string): void {
    const error = clip(`dataset ${name}: ${message}`);
    const previous = this.datasets.get(name);
    this.datasets.set(name, {
      status: 'error',
      error,
      ...(previous?.rowCount === undefined ? {} : { rowCount: previous.rowCount }),
      ...(previous?.loadedAt === undefined ? {} : { loadedAt: previous.loadedAt }),
    });
    this.options.logger.warn({ dataset: name, error }, 'dataset failed to load');
  }

  private async dropUnwantedViews(): Promise<void> {
    const { engine } = this.options;
    const keep = new Set(this.desired?.config.views.map((view) => view.name.toLowerCase()));
    for (const name of await engine.viewNames())
      if (!keep.has(name.toLowerCase())) await engine.dropView(name);
  }

  /** Views after datasets; a view may use another, so retry failures while any view succeeds. */
  private async recreateViews(): Promise<void> {
    this.viewsStale = false;
    const desired = this.desired;
    if (desired === undefined) return;
    const { engine } = this.options;
    const wanted = desired.config.views;
    await this.dropUnwantedViews();
    const datasetNames = new Set(desired.config.datasets.map((dataset) => dataset.name.toLowerCase()));
    const results: Record<string, ViewState> = {};
    let pending: View[] = [];
    for (const view of wanted) {
      if (datasetNames.has(view.name.toLowerCase()))
        results[view.name] = { ok: false, error: `the name ${view.name} is already used by a dataset` };
      else pending.push(view);
    }
    let progress = true;
    while (pending.length > 0 && progress) {
      const failed: View[] = [];
      for (const view of pending) {
        try {
          await engine.createView(view.name, view.sql);
          results[view.name] = { ok: true };
        } catch (err) {
          results[view.name] = { ok: false, error: clip(messageOf(err)) };
          failed.push(view);
        }
      }
      progress = failed.length < pending.length;
      pending = failed;
    }
    // A view that no longer binds must not keep answering from its previous definition.
    for (const view of pending) await engine.dropView(view.name).catch(() => undefined);
    this.views = results;
    if (!this.configChanged) this.appliedGeneration = desired.generation;
  }
}
