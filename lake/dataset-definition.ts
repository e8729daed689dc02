import type { Dataset, Spicepod } from '../crds/context-lake/types.js';
import { REFRESH_CHECK_INTERVAL, parseDatasetSource } from '../platform/lake-config/dataset-source.js';
import type { Connector, DatasetSource } from '../platform/lake-config/dataset-source.js';

/** A dataset of the pushed config as the lake sees it: what makes its data, and where it comes from. */

/**
 * What makes a dataset's data: its source and params (not `notifications` nor the check
 * interval, which only say when to look).
 */
export function definitionOf(dataset: Dataset): string {
  const params = Object.entries(dataset.params ?? {})
    .filter(([name]) => name !== REFRESH_CHECK_INTERVAL)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([dataset.from, params]);
}

/** Datasets before this one in the config, by SQL name: a later one with the same name cannot load. */
function namesBefore(config: Spicepod | undefined, name: string): Set<string> {
  const names = new Set<string>();
  for (const dataset of config?.datasets ?? []) {
    if (dataset.name === name) break;
    names.add(dataset.name.toLowerCase());
  }
  return names;
}

/** The dataset's source, or why it cannot load. */
export function sourceOf(
  config: Spicepod | undefined,
  dataset: Dataset,
  connectors: ReadonlySet<Connector>,
): { source: DatasetSource } | { error: string } {
  if (namesBefore(config, dataset.name).has(dataset.name.toLowerCase()))
    return { error: `the name ${dataset.name} is already used by another dataset (SQL names ignore case)` };
  const parsed = parseDatasetSource(dataset, { connectors });
  if (!parsed.ok)
    return { error: parsed.issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ') };
  return { source: parsed.source };
}
