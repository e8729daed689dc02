/**
 * Where an organization's uploaded file lives (POST /files writes it, the operator reads it). The
 * namespace is the key's prefix, so a file id of another organization names nothing in the caller's.
 */
export const uploadedFileKey = (namespace: string, id: string): string => `orgs/${namespace}/files/${id}`;

/** A workspace's artifact: `filename` is a relative path already checked by the artifact filename rules. */
export const artifactKey = (namespace: string, workspace: string, filename: string): string =>
  `${artifactPrefix(namespace, workspace)}${filename}`;

/** Every artifact of a workspace lives under this prefix (list and delete-all stay inside it). */
export const artifactPrefix = (namespace: string, workspace: string): string =>
  `orgs/${namespace}/workspaces/${workspace}/artifacts/`;

/** The archived events of one prompt (JSON lines, one TaskEvent per line, in seq order). */
export const promptEventsKey = (namespace: string, task: string, promptId: string): string =>
  `${taskEventsPrefix(namespace, task)}${promptId}.jsonl`;

/** Every archived event file of a task lives under this prefix: the purge of a deleted task removes it. */
export const taskEventsPrefix = (namespace: string, task: string): string =>
  `orgs/${namespace}/tasks/${task}/events/`;
