// What a phase with a controller reports beside the times: the controller's CPU and memory.
import type { PhaseResult } from '../reconcile-throughput/phase.js';
import type { ProcessUsage } from './process-usage.js';

export interface ControllerPhase extends PhaseResult {
  /** CPU seconds the controller spent from the first create until all were ready. */
  cpuSeconds: number;
  /** Resident memory when all were ready, and the highest since the controller started. */
  rssMiB: number;
  peakRssMiB: number;
}

/** The controller's figures over a phase, from its usage before the first create and after the last ready. */
export const controllerFigures = (
  before: ProcessUsage,
  after: ProcessUsage,
): Pick<ControllerPhase, 'cpuSeconds' | 'rssMiB' | 'peakRssMiB'> => ({
  cpuSeconds: Math.round((after.cpuSeconds - before.cpuSeconds) * 100) / 100,
  rssMiB: after.rssMiB,
  peakRssMiB: after.peakRssMiB,
});
