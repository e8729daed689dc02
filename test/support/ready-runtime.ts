import type { WorkloadObservation, WorkloadRuntime } from '../../operator/runtimes/types.js';

/**
 * A runtime whose workloads are ready at once (nothing runs): for exercising the reconcilers'
 * own reads and writes, not a workload's. Its endpoint refuses connections.
 */
export const readyRuntime: WorkloadRuntime = {
  name: 'process',
  collectedByOwnerReferences: false,
  apply: (object): Promise<WorkloadObservation> =>
    Promise.resolve({
      provisioned: true,
      running: true,
      ready: true,
      sandboxId: object.metadata.name,
      endpoint: 'http://127.0.0.1:1',
      reason: 'RunnerReady',
      message: 'ready',
    }),
  remove: () => Promise.resolve(),
};
