// SIGINT/SIGTERM during a run: every wait gives up, and the bench stops what it started on the way out.
import { setMaxListeners } from 'node:events';

export interface Interruption {
  /** Aborted by the first SIGINT or SIGTERM. */
  signal: AbortSignal;
  /** Stops listening for the signals (at the end of the run). */
  dispose(): void;
}

export function interruptOnSignals(): Interruption {
  const controller = new AbortController();
  // Every sleeping worker of a bench may listen to it (dozens at once).
  setMaxListeners(0, controller.signal);
  const onSignal = (signal: NodeJS.Signals): void => {
    console.error(`\n${signal}: stopping`);
    controller.abort(new Error(`interrupted by ${signal}`));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
