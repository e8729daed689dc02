import type { AgentComputer } from '../../../crds/index.js';

/**
 * preview id → the workspace (namespace/name) whose spec lists it: a preview URL finds its
 * workspace without a scan. Kept in step with the agent computer cache by the read model.
 */
export class PreviewIndex {
  private readonly workspaceOf = new Map<string, { namespace: string; name: string }>();
  private readonly idsOf = new Map<string, readonly string[]>();

  /** Re-indexes one workspace as cached now (`deleted`: it is gone). */
  update(ac: AgentComputer, deleted: boolean): void {
    const namespace = ac.metadata.namespace ?? '';
    const key = `${namespace}/${ac.metadata.name}`;
    const ids = deleted ? [] : (ac.spec.previews ?? []).map((preview) => preview.id);
    for (const id of this.idsOf.get(key) ?? []) {
      if (!ids.includes(id)) this.workspaceOf.delete(id);
    }
    for (const id of ids) this.workspaceOf.set(id, { namespace, name: ac.metadata.name });
    if (ids.length === 0) this.idsOf.delete(key);
    else this.idsOf.set(key, ids);
  }

  /** Where a preview id was last seen; the caller checks the entry is still in that workspace. */
  workspace(previewId: string): { namespace: string; name: string } | undefined {
    return this.workspaceOf.get(previewId);
  }
}
