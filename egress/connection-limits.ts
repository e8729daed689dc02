/** How many connections one prompt, and the whole proxy, may hold open at once. */
export interface ConnectionLimitSettings {
  perPrompt: number;
  total: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimitSettings = { perPrompt: 64, total: 4096 };

/**
 * Counts open tunnels and forwarded requests: a prompt that opens connections in a loop gets
 * refused (429) rather than exhausting the proxy's sockets for every other prompt.
 */
export class ConnectionLimits {
  private readonly open = new Map<string, number>();
  private total = 0;

  constructor(private readonly settings: ConnectionLimitSettings = DEFAULT_CONNECTION_LIMITS) {}

  /** A release function (call it exactly once), or undefined when a limit is reached. */
  acquire(prompt: string): (() => void) | undefined {
    const held = this.open.get(prompt) ?? 0;
    if (held >= this.settings.perPrompt || this.total >= this.settings.total) return undefined;
    this.open.set(prompt, held + 1);
    this.total += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= 1;
      const left = (this.open.get(prompt) ?? 1) - 1;
      if (left === 0) this.open.delete(prompt);
      else this.open.set(prompt, left);
    };
  }
}
