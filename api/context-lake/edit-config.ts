import type { Dataset, Spicepod, View } from '../../crds/context-lake/types.js';
import { ApiError } from '../errors.js';
import type { ErrorDetail } from '../errors.js';
import type { DatasetBody, DatasetUpdate, PatchConfigBody, ViewBody } from './schemas.js';

/**
 * The edits of the context-lake API as pure functions of the current configuration: each says
 * what the configuration becomes and which datasets and views the request saved (with where they
 * sit in the request, so that an issue names the request's own path). They never touch a store,
 * so a write that lost a race simply runs its edit again on the fresh configuration.
 */

export interface Saved<T> {
  item: T;
  /** Where the item sits in the request body: '' for a whole-body dataset, `addDatasets.0`, `updateDatasets.x`. */
  path: string;
}

export interface ConfigEdit {
  config: Spicepod;
  datasets: Saved<Dataset>[];
  views: Saved<View>[];
  /** Breaches found while applying (missing names in a PATCH); validation adds the rest. */
  issues: ErrorDetail[];
}

export const joinPath = (prefix: string, rest: string): string =>
  prefix === '' ? rest : rest === '' ? prefix : `${prefix}.${rest}`;

/** A dataset without undefined fields, so that comparing the stored and the edited config is exact. */
export function toDataset(body: DatasetBody): Dataset {
  return {
    from: body.from,
    name: body.name,
    ...(body.params === undefined ? {} : { params: body.params }),
    ...(body.notifications === undefined ? {} : { notifications: body.notifications }),
  };
}

const toView = (body: ViewBody): View => ({ name: body.name, sql: body.sql });

/** What an organization's configuration is before its first write. */
export const emptyConfig = (name: string): Spicepod => ({
  version: 'v1',
  kind: 'Spicepod',
  name,
  datasets: [],
  views: [],
});

function assertNameFree(config: Spicepod, name: string): void {
  if (config.datasets.some((dataset) => dataset.name === name))
    throw new ApiError('conflict', `A dataset named ${name} exists already`);
  if (config.views.some((view) => view.name === name))
    throw new ApiError('conflict', `The name ${name} is used by a view`);
}

/** The body of a PUT must name what its path names: renaming is a POST plus a DELETE. */
export function assertSameName(pathName: string, bodyName: string): void {
  if (pathName === bodyName) return;
  throw validationFailed([{ path: 'name', message: `name must equal the name in the path (${pathName})` }]);
}

/** A 400 with the validation shape (docs/api.md#errors), its message naming the first breach. */
export function validationFailed(issues: readonly ErrorDetail[]): ApiError {
  const first = issues[0];
  const summary = first === undefined ? 'invalid configuration' : `${first.path}: ${first.message}`;
  return new ApiError('validation_error', `Request validation failed: ${summary}`, issues);
}

export function addDataset(config: Spicepod, body: DatasetBody): ConfigEdit {
  assertNameFree(config, body.name);
  const dataset = toDataset(body);
  return {
    config: { ...config, datasets: [...config.datasets, dataset] },
    datasets: [{ item: dataset, path: '' }],
    views: [],
    issues: [],
  };
}

export function replaceDataset(config: Spicepod, body: DatasetBody): ConfigEdit {
  if (!config.datasets.some((dataset) => dataset.name === body.name))
    throw ApiError.notFound(`Dataset ${body.name}`);
  const dataset = toDataset(body);
  return {
    config: { ...config, datasets: config.datasets.map((d) => (d.name === body.name ? dataset : d)) },
    datasets: [{ item: dataset, path: '' }],
    views: [],
    issues: [],
  };
}

export function removeDataset(config: Spicepod, name: string): ConfigEdit {
  if (!config.datasets.some((dataset) => dataset.name === name)) throw ApiError.notFound(`Dataset ${name}`);
  return {
    config: { ...config, datasets: config.datasets.filter((dataset) => dataset.name !== name) },
    datasets: [],
    views: [],
    issues: [],
  };
}

export function addView(config: Spicepod, body: ViewBody): ConfigEdit {
  assertNameFree(config, body.name);
  const view = toView(body);
  return {
    config: { ...config, views: [...config.views, view] },
    datasets: [],
    views: [{ item: view, path: '' }],
    issues: [],
  };
}

export function replaceView(config: Spicepod, body: ViewBody): ConfigEdit {
  if (!config.views.some((view) => view.name === body.name)) throw ApiError.notFound(`View ${body.name}`);
  const view = toView(body);
  return {
    config: { ...config, views: config.views.map((v) => (v.name === body.name ? view : v)) },
    datasets: [],
    views: [{ item: view, path: '' }],
    issues: [],
  };
}

export function removeView(config: Spicepod, name: string): ConfigEdit {
  if (!config.views.some((view) => view.name === name)) throw ApiError.notFound(`View ${name}`);
  return {
    config: { ...config, views: config.views.filter((view) => view.name !== name) },
    datasets: [],
    views: [],
    issues: [],
  };
}

/** `updateDatasets[name]`: each given field replaces the old one whole; `params` are not merged. */
function updatedDataset(old: Dataset, update: DatasetUpdate): Dataset {
  return toDataset({
    from: update.from ?? old.from,
    name: update.name ?? old.name,
    params: update.params ?? old.params,
    notifications: update.notifications ?? old.notifications,
  });
}

/** Removes named items; a name that is not there is an issue at its index. */
function removeNamed<T extends { name: string }>(
  items: T[],
  names: readonly string[] | undefined,
  field: string,
  noun: string,
  issues: ErrorDetail[],
): T[] {
  let left = items;
  (names ?? []).forEach((name, index) => {
    if (!left.some((item) => item.name === name))
      issues.push({ path: `${field}.${index}`, message: `there is no ${noun} named ${name}` });
    left = left.filter((item) => item.name !== name);
  });
  return left;
}

/**
 * PATCH /config: removes, then adds, then updates (docs/api.md#context-lake), so that removing and adding the
 * same name in one request replaces it. Name clashes are left to validation, which sees the result.
 */
export function patchConfig(config: Spicepod, patch: PatchConfigBody): ConfigEdit {
  const issues: ErrorDetail[] = [];
  let datasets = removeNamed(config.datasets, patch.removeDatasets, 'removeDatasets', 'dataset', issues);
  let views = removeNamed(config.views, patch.removeViews, 'removeViews', 'view', issues);
  const saved: Saved<Dataset>[] = [];
  const savedViews: Saved<View>[] = [];
  (patch.addDatasets ?? []).forEach((body, index) => {
    const dataset = toDataset(body);
    datasets = [...datasets, dataset];
    saved.push({ item: dataset, path: `addDatasets.${index}` });
  });
  (patch.addViews ?? []).forEach((body, index) => {
    const view = toView(body);
    views = [...views, view];
    savedViews.push({ item: view, path: `addViews.${index}` });
  });
  for (const [name, update] of Object.entries(patch.updateDatasets ?? {})) {
    const path = `updateDatasets.${name}`;
    const old = datasets.find((dataset) => dataset.name === name);
    if (old === undefined) {
      issues.push({ path, message: `there is no dataset named ${name}` });
      continue;
    }
    const dataset = updatedDataset(old, update);
    datasets = datasets.map((d) => (d === old ? dataset : d));
    const earlier = saved.findIndex((entry) => entry.item === old);
    // An update of a dataset added in the same request: its issues are the update's.
    if (earlier >= 0) saved.splice(earlier, 1);
    saved.push({ item: dataset, path });
  }
  return { config: { ...config, datasets, views }, datasets: saved, views: savedViews, issues };
}
