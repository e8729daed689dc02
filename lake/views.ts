import type { Spicepod, View } from '../crds/context-lake/types.js';
import type { LakeStatus } from '../platform/lake-protocol.js';
import type { LakeEngine } from './engine.js';
import { messageOf, withoutServerPaths } from './errors.js';

/**
 * The config's views (not the views the lake makes for datasets, which engine.viewNames() leaves
 * out): dropped when the config no longer has them, recreated after loads.
 */

export type ViewState = LakeStatus['views'][string];

/**
 * A message for a dataset's or a view's status: no server path, and well within the ContextLake
 * status limit (4 KiB a message).
 */
export function clip(text: string): string {
  const message = withoutServerPaths(text);
  return message.length > 2000 ? `${message.slice(0, 1997)}...` : message;
}

export async function dropUnwantedViews(engine: LakeEngine, config: Spicepod | undefined): Promise<void> {
  const keep = new Set(config?.views.map((view) => view.name.toLowerCase()));
  for (const name of await engine.viewNames()) if (!keep.has(name.toLowerCase())) await engine.dropView(name);
}

/** Views after datasets; a view may use another, so retry failures while any view succeeds. */
export async function recreateViews(
  engine: LakeEngine,
  config: Spicepod,
): Promise<Record<string, ViewState>> {
  await dropUnwantedViews(engine, config);
  const datasetNames = new Set(config.datasets.map((dataset) => dataset.name.toLowerCase()));
  const results: Record<string, ViewState> = {};
  let pending: View[] = [];
  for (const view of config.views) {
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
  return results;
}
