// Keeps the workspace Pods' logs while the bench runs: a claimed member is deleted right after its
// task, and the kubelet removes a deleted Pod's log with it, so the runner's side of a claim (its
// request log: the dispatch's arrival, the event stream's opening) would be gone by the end.
import { cp } from 'node:fs/promises';
import { relative, sep } from 'node:path';

/** How often the workspace Pods' logs are copied: a claimed member lives a few seconds after its task. */
const EVERY_MS = 500;

/**
 * Copies the logs of Pods in `namespace` from the kubelet's `podLogs` directory into `into` every
 * EVERY_MS (each Pod's directory is named `<namespace>_<pod>_<uid>`); the returned function stops
 * it after a last copy.
 */
export function keepPodLogs(podLogs: string, namespace: string, into: string): () => Promise<void> {
  const ofNamespace = (path: string): boolean =>
    path === podLogs || relative(podLogs, path).split(sep)[0]?.startsWith(`${namespace}_`) === true;
  let copying: Promise<void> = Promise.resolve();
  const copy = (): Promise<void> => {
    copying = copying
      .then(() => cp(podLogs, into, { recursive: true, force: true, filter: ofNamespace }))
      .catch(() => undefined); // a Pod removed mid-copy: the next copy has the rest
    return copying;
  };
  const timer = setInterval(() => void copy(), EVERY_MS);
  return async () => {
    clearInterval(timer);
    await copy();
  };
}
