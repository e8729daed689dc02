import { randomUUID } from 'node:crypto';
import {
  ARTIFACTS_CHANGED_ANNOTATION,
  ARTIFACT_UPLOADS_OPEN_UNTIL_ANNOTATION,
  AgentComputerType,
} from '../../../crds/index.js';
import type { AgentComputer } from '../../../crds/index.js';
import type { ResourceStore } from '../../../platform/store/types.js';
import { updateWithRetry } from '../../optimistic-update.js';

/**
 * Tells the operator that the workspace's artifacts in object storage changed (an upload or a
 * deletion through the API), after the change and before the answer: a prompt the client sends
 * next finds the store's side pushed into the workspace first. A workspace gone meanwhile needs
 * nothing.
 */
export async function recordArtifactsChanged(store: ResourceStore, workspace: AgentComputer): Promise<void> {
  await annotate(store, workspace, () => ({ [ARTIFACTS_CHANGED_ANNOTATION]: randomUUID() }));
}

/**
 * Tells the operator that signed upload URLs valid until `expiresAt` were issued, before they are
 * answered: their bytes reach object storage without the API server, so until then every prompt
 * gets the store's side pushed first. Keeps the later of this and an earlier issue's time.
 */
export async function recordArtifactUploadsOpen(
  store: ResourceStore,
  workspace: AgentComputer,
  expiresAt: string,
): Promise<void> {
  await annotate(store, workspace, (annotations) => {
    const known = Date.parse(annotations[ARTIFACT_UPLOADS_OPEN_UNTIL_ANNOTATION] ?? '');
    return Number.isNaN(known) || known < Date.parse(expiresAt)
      ? { [ARTIFACT_UPLOADS_OPEN_UNTIL_ANNOTATION]: expiresAt }
      : undefined;
  });
}

/** Merges annotations onto the stored workspace (the operator's writes kept); undefined: nothing to change. */
async function annotate(
  store: ResourceStore,
  workspace: AgentComputer,
  change: (annotations: Readonly<Record<string, string>>) => Record<string, string> | undefined,
): Promise<void> {
  await updateWithRetry(
    store,
    AgentComputerType,
    workspace.metadata.namespace,
    workspace.metadata.name,
    (current) => {
      if (current.metadata.uid !== workspace.metadata.uid) return undefined;
      const annotations = current.metadata.annotations ?? {};
      const changed = change(annotations);
      return changed === undefined
        ? undefined
        : { ...current, metadata: { ...current.metadata, annotations: { ...annotations, ...changed } } };
    },
  );
}
