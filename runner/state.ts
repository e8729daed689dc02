/** What the runner is doing, as GET /v1/status reports it. */
export type RunnerActivity = 'idle' | 'busy';

/**
 * The runner's activity. Executors (a later issue) call `begin()` when a prompt starts and the
 * returned function when it ends; counting rather than a flag keeps overlapping work correct.
 */
export class RunnerState {
  readonly startedAt: Date;
  private active = 0;

  constructor(now: Date = new Date()) {
    this.startedAt = now;
  }

  get activity(): RunnerActivity {
    return this.active > 0 ? 'busy' : 'idle';
  }

  /** Marks the runner busy until the returned function is called (calling it twice is harmless). */
  begin(): () => void {
    this.active += 1;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.active -= 1;
    };
  }
}
