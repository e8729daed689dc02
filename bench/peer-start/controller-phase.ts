// What a phase with a controller reports beside the times: the controller's CPU and memory.
import { phaseResult } from '../reconcile-throughput/phase.js';
import type { PhaseResult } from '../reconcile-throughput/phase.js';
import type { ControllerProcess } from './controller-process.js';
import type { ProcessUsage } from './process-usage.js';

export interface ControllerPhase extends PhaseResult {
  /** CPU seconds the controller spent from the first create until all were ready. */
  cpuSeconds: number;
  /** Resident memory when all were ready, and the highest since the controller started. */
  rssMiB: number;
  peakRssMiB: number;
}

/** The controller's figures over a phase, from its usage before the first create and after the last ready. */
const controllerFigures = (
  before: ProcessUsage,
  after: ProcessUsage,
): Pick<ControllerPhase, 'cpuSeconds' | 'rssMiB' | 'peakRssMiB'> => ({
  cpuSeconds: Math.round((after.cpuSeconds - before.cpuSeconds) * 100) / 100,
  rssMiB: after.rssMiB,
  peakRssMiB: after.peakRssMiB,
});

/**
 * Times `createUntilReady` (which creates the workspaces from `start` on and resolves with when each
 * was first seen ready) and reads what `controller` spent meanwhile.
 */
export async function timeControllerPhase(
  controller: ControllerProcess,
  createUntilReady: (start: number) => Promise<{ ready: number[]; createdMs: number }>,
): Promise<ControllerPhase> {
  const before = await controller.usage();
  const start = performance.now();
  const { ready, createdMs } = await createUntilReady(start);
  const totalMs = performance.now() - start;
  return {
    // A controller in a process of its own: its requests and connections are not counted here.
    ...phaseResult(ready, {
      startedAt: start,
      totalMs,
      createdMs,
      requests: Number.NaN,
      sockets: Number.NaN,
    }),
    ...controllerFigures(before, await controller.usage()),
  };
}
