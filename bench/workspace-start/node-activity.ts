// Whether the real node is still busy with the organization's workloads: a workspace Pod starting or
// stopping, or local-path's helper Pods making or removing a disk. The claim phase times each task
// only once this is quiet, so that no refill or deletion shares the cores with the timed task.
import { PodType } from '../../operator/runtimes/kube-objects.js';
import type { Pod } from '../../operator/runtimes/kube-objects.js';
import type { ResourceStore } from '../../platform/store/types.js';

/** Where local-path-provisioner runs the helper Pods that make and remove PVC directories. */
const LOCAL_PATH_NAMESPACE = 'local-path-storage';

const isReady = (pod: Pod): boolean =>
  pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/** What of `namespace`'s Pods and the disk helpers is starting or stopping; undefined when nothing is. */
export async function nodeActivity(store: ResourceStore, namespace: string): Promise<string | undefined> {
  const [workspaces, helpers] = await Promise.all([
    store.list(PodType, { namespace }),
    store.list(PodType, { namespace: LOCAL_PATH_NAMESPACE }),
  ]);
  const moving = workspaces.items.filter(
    (pod) => pod.metadata.deletionTimestamp !== undefined || !isReady(pod),
  );
  const diskHelpers = helpers.items.filter((pod) => pod.metadata.name.startsWith('helper-pod-'));
  const busy = [
    ...moving.map(
      (pod) =>
        `Pod ${pod.metadata.name} ${pod.metadata.deletionTimestamp === undefined ? 'starting' : 'stopping'}`,
    ),
    ...diskHelpers.map((pod) => `disk helper ${pod.metadata.name}`),
  ];
  return busy.length === 0 ? undefined : busy.join(', ');
}
