import { z } from 'zod';
import { UsageTally, eventJson } from './call-usage.js';
import type { CallUsage, SseEvent, UsageReader } from './call-usage.js';

const count = z.number().int().min(0).optional().catch(undefined);

/** generateContent's answer, and each chunk of streamGenerateContent (its usage is cumulative). */
const GenerateContentResponseSchema = z.looseObject({
  modelVersion: z.string().min(1).optional().catch(undefined),
  usageMetadata: z
    .looseObject({
      promptTokenCount: count,
      candidatesTokenCount: count,
      cachedContentTokenCount: count,
      thoughtsTokenCount: count,
      toolUsePromptTokenCount: count,
    })
    .optional()
    .catch(undefined),
});

/**
 * Gemini generateContent and streamGenerateContent (`alt=sse`, or a streamed JSON array): the
 * prompt count includes cached content; thinking tokens are billed as output. A stream has no
 * closing event, so its latest event is always the one held back.
 */
export class GeminiUsageReader implements UsageReader {
  private readonly tally = new UsageTally();

  readJson(body: unknown): void {
    for (const chunk of Array.isArray(body) ? body : [body]) this.take(chunk);
  }

  readEvent(event: SseEvent): void {
    this.take(eventJson(event));
  }

  isFinal(): boolean {
    return true;
  }

  usage(): CallUsage {
    return this.tally.usage();
  }

  private take(chunk: unknown): void {
    const parsed = GenerateContentResponseSchema.safeParse(chunk);
    if (!parsed.success) return;
    if (parsed.data.modelVersion !== undefined) this.tally.model = parsed.data.modelVersion;
    const usage = parsed.data.usageMetadata;
    if (usage === undefined) return;
    this.tally.input = (usage.promptTokenCount ?? 0) + (usage.toolUsePromptTokenCount ?? 0);
    this.tally.output = (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0);
    this.tally.cacheRead = usage.cachedContentTokenCount ?? 0;
  }
}
