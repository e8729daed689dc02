import { z } from 'zod';
import { UsageTally, eventJson } from './call-usage.js';
import type { CallUsage, SseEvent, UsageReader } from './call-usage.js';

const count = z.number().int().min(0).optional().catch(undefined);

/** The Messages API's usage object (JSON answer, message_start's message, message_delta). */
const AnthropicUsageSchema = z.looseObject({
  input_tokens: count,
  output_tokens: count,
  cache_read_input_tokens: count,
  cache_creation_input_tokens: count,
});

const MessageSchema = z.looseObject({
  model: z.string().min(1).optional().catch(undefined),
  usage: AnthropicUsageSchema.optional().catch(undefined),
});

const StreamEventSchema = z.looseObject({
  type: z.string(),
  message: MessageSchema.optional().catch(undefined),
  usage: AnthropicUsageSchema.optional().catch(undefined),
});

/**
 * Anthropic Messages API: `usage.input_tokens` excludes the cache, so the input is the sum of
 * input, cache read and cache creation. Streams report it in `message_start` and the cumulative
 * output in `message_delta`; `message_stop` ends the stream.
 */
export class AnthropicUsageReader implements UsageReader {
  private readonly tally = new UsageTally();
  private fresh = 0;

  readJson(body: unknown): void {
    const message = MessageSchema.safeParse(body);
    if (message.success) this.take(message.data.model, message.data.usage);
  }

  readEvent(event: SseEvent): void {
    const parsed = StreamEventSchema.safeParse(eventJson(event));
    if (!parsed.success) return;
    if (parsed.data.type === 'message_start')
      this.take(parsed.data.message?.model, parsed.data.message?.usage);
    else if (parsed.data.type === 'message_delta') this.take(undefined, parsed.data.usage);
  }

  isFinal(event: SseEvent): boolean {
    return (
      event.event === 'message_stop' ||
      StreamEventSchema.safeParse(eventJson(event)).data?.type === 'message_stop'
    );
  }

  usage(): CallUsage {
    this.tally.input = this.fresh + this.tally.cacheRead + this.tally.cacheWrite;
    return this.tally.usage();
  }

  private take(model: string | undefined, usage: z.infer<typeof AnthropicUsageSchema> | undefined): void {
    if (model !== undefined) this.tally.model = model;
    if (usage === undefined) return;
    // Each figure present is the running total so far: it replaces the earlier one.
    if (usage.input_tokens !== undefined) this.fresh = usage.input_tokens;
    if (usage.output_tokens !== undefined) this.tally.output = usage.output_tokens;
    if (usage.cache_read_input_tokens !== undefined) this.tally.cacheRead = usage.cache_read_input_tokens;
    if (usage.cache_creation_input_tokens !== undefined)
      this.tally.cacheWrite = usage.cache_creation_input_tokens;
  }
}
