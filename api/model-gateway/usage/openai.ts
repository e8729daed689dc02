import { z } from 'zod';
import { UsageTally, eventJson } from './call-usage.js';
import type { CallUsage, SseEvent, UsageReader } from './call-usage.js';

const count = z.number().int().min(0).optional().catch(undefined);
const cachedDetails = z.looseObject({ cached_tokens: count }).optional().catch(undefined);

/**
 * Both APIs' usage: Chat Completions (`prompt_tokens`, `completion_tokens`,
 * `prompt_tokens_details.cached_tokens`) and Responses (`input_tokens`, `output_tokens`,
 * `input_tokens_details.cached_tokens`). Input includes the cached tokens in both.
 */
const OpenAiUsageSchema = z.looseObject({
  prompt_tokens: count,
  completion_tokens: count,
  prompt_tokens_details: cachedDetails,
  input_tokens: count,
  output_tokens: count,
  input_tokens_details: cachedDetails,
});

const ResponseSchema = z.looseObject({
  model: z.string().min(1).optional().catch(undefined),
  usage: OpenAiUsageSchema.nullable().optional().catch(undefined),
});

/** A stream's event: a chat chunk (usage in the last one with include_usage) or a Responses event. */
const StreamEventSchema = ResponseSchema.extend({
  type: z.string().optional().catch(undefined),
  response: ResponseSchema.optional().catch(undefined),
});

const FINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/** OpenAI Chat Completions and Responses, JSON and SSE. */
export class OpenAiUsageReader implements UsageReader {
  private readonly tally = new UsageTally();

  readJson(body: unknown): void {
    const parsed = ResponseSchema.safeParse(body);
    if (parsed.success) this.take(parsed.data);
  }

  readEvent(event: SseEvent): void {
    const parsed = StreamEventSchema.safeParse(eventJson(event));
    if (!parsed.success) return;
    this.take(parsed.data);
    if (parsed.data.response !== undefined) this.take(parsed.data.response);
  }

  isFinal(event: SseEvent): boolean {
    return event.data === '[DONE]' || (event.event !== undefined && FINAL_EVENTS.has(event.event));
  }

  usage(): CallUsage {
    return this.tally.usage();
  }

  private take(response: z.infer<typeof ResponseSchema>): void {
    if (response.model !== undefined) this.tally.model = response.model;
    const usage = response.usage;
    if (usage === undefined || usage === null) return;
    const input = usage.prompt_tokens ?? usage.input_tokens;
    const output = usage.completion_tokens ?? usage.output_tokens;
    const cached = (usage.prompt_tokens_details ?? usage.input_tokens_details)?.cached_tokens;
    if (input !== undefined) this.tally.input = input;
    if (output !== undefined) this.tally.output = output;
    if (cached !== undefined) this.tally.cacheRead = cached;
  }
}
