export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  /** A runner healthy for this long before it died starts the sequence again from `initialMs`. */
  resetAfterMs: number;
}

/** Exponential restart back-off: initial, doubling to a cap; reset by a long healthy run. */
export class Backoff {
  private nextMs: number;

  constructor(private readonly options: BackoffOptions) {
    this.nextMs = options.initialMs;
  }

  /** The delay before the next restart, given how long the runner that died had been healthy. */
  next(healthyForMs: number): number {
    if (healthyForMs >= this.options.resetAfterMs) this.reset();
    const delay = this.nextMs;
    this.nextMs = Math.min(this.nextMs * 2, this.options.maxMs);
    return delay;
  }

  reset(): void {
    this.nextMs = this.options.initialMs;
  }
}
