import type { TokenCounts } from '../../../platform/model-prices.js';

/** One server-sent event as the provider sent it: its name and its data lines joined. */
export interface SseEvent {
  event: string | undefined;
  data: string;
}

/** What one call used, as the provider's response said (zero tokens when it said nothing). */
export interface CallUsage extends TokenCounts {
  /** The model the provider named in its response, when it named one. */
  model: string | undefined;
}

/**
 * Reads a provider's usage from its response: a JSON body, or the events of a stream, fed in the
 * order they came. Figures the provider repeats cumulatively (a later event's count replaces an
 * earlier one's) are replaced, never summed.
 */
export interface UsageReader {
  readJson(body: unknown): void;
  readEvent(event: SseEvent): void;
  /** Whether `event` may be the stream's last: it is held back until the usage is recorded. */
  isFinal(event: SseEvent): boolean;
  usage(): CallUsage;
}

/** The data of an event as JSON, or undefined (`[DONE]`, comments, malformed data). */
export function eventJson(event: SseEvent): unknown {
  if (event.data === '' || event.data === '[DONE]') return undefined;
  try {
    return JSON.parse(event.data) as unknown;
  } catch {
    return undefined;
  }
}

/** A counter of usage: set figures as the provider reports them, read the call's totals. */
export class UsageTally {
  model: string | undefined;
  input = 0;
  output = 0;
  cacheRead = 0;
  cacheWrite = 0;

  usage(): CallUsage {
    return {
      model: this.model,
      inputTokens: this.input,
      outputTokens: this.output,
      cacheReadTokens: this.cacheRead,
      cacheWriteTokens: this.cacheWrite,
    };
  }
}
