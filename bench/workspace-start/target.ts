// What a phase needs of a runtime: the API to send tasks to, and the store behind it (for pools and
// for telling a claimed workspace from a cold one).
import type { ResourceStore } from '../../platform/store/types.js';
import type { Endpoint } from '../task-latency/client.js';
import type { Sizes } from './config.js';
import type { WorkloadResources } from '../../crds/index.js';

export interface Target {
  /** How the figures are headed: the runtime and where it runs. */
  label: string;
  endpoint: Endpoint;
  /** Admin access to the resources (the embedded store, or the real node's Kubernetes API). */
  store: ResourceStore;
  /** The organization's namespace: its workspaces and its pool. */
  namespace: string;
  sizes: Sizes;
  /** What a pool member asks for (the template's resources); undefined: the installation default. */
  poolResources: WorkloadResources | undefined;
  /**
   * What of the organization's workloads is still starting or stopping (a Pod not yet Ready or being
   * deleted, a disk being made or removed), or undefined when nothing is: the claim phase times each
   * task on a settled node. Undefined: nothing to wait for beyond the pool and the store.
   */
  busy?: () => Promise<string | undefined>;
  /** How a task's workspace came to start, from its workload's timestamps; `postedAt` is the POST's wallMs(). */
  timeline?: (workspaceId: string, postedAt: number) => Promise<string>;
}
