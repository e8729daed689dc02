import { describe, expect, it } from '@jest/globals';
import { SseRelay } from '../../api/model-gateway/sse-relay.js';
import { usageReaderFor } from '../../api/model-gateway/usage/readers.js';
import type { SseEvent } from '../../api/model-gateway/usage/call-usage.js';

const event = (data: unknown, name?: string): SseEvent => ({
  event: name,
  data: typeof data === 'string' ? data : JSON.stringify(data),
});

describe('usage readers', () => {
  it('takes the last cumulative output of an Anthropic stream, not the sum', () => {
    const reader = usageReaderFor('anthropic');
    reader.readEvent(
      event({
        type: 'message_start',
        message: { model: 'claude-haiku-4-5', usage: { input_tokens: 10, output_tokens: 1 } },
      }),
    );
    reader.readEvent(event({ type: 'message_delta', usage: { output_tokens: 30 } }));
    reader.readEvent(event({ type: 'message_delta', usage: { output_tokens: 42 } }));
    expect(reader.usage()).toEqual({
      model: 'claude-haiku-4-5',
      inputTokens: 10,
      outputTokens: 42,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
  });

  it('counts Gemini thinking tokens as output', () => {
    const reader = usageReaderFor('gemini');
    reader.readJson({
      modelVersion: 'gemini-2.5-pro',
      usageMetadata: {
        promptTokenCount: 20,
        candidatesTokenCount: 5,
        thoughtsTokenCount: 7,
        cachedContentTokenCount: 4,
      },
    });
    expect(reader.usage()).toEqual({
      model: 'gemini-2.5-pro',
      inputTokens: 20,
      outputTokens: 12,
      cacheReadTokens: 4,
      cacheWriteTokens: 0,
    });
  });

  it('reads an OpenAI Responses answer with cached input', () => {
    const reader = usageReaderFor('openai');
    reader.readJson({
      model: 'gpt-5',
      usage: { input_tokens: 30, output_tokens: 9, input_tokens_details: { cached_tokens: 10 } },
    });
    expect(reader.usage()).toMatchObject({ inputTokens: 30, outputTokens: 9, cacheReadTokens: 10 });
  });

  it('ignores usage fields of the wrong type instead of failing', () => {
    const reader = usageReaderFor('openai');
    reader.readJson({ model: 'gpt-5', usage: { prompt_tokens: 'many', completion_tokens: 3 } });
    expect(reader.usage()).toMatchObject({ inputTokens: 0, outputTokens: 3 });
  });
});

describe('SSE relay', () => {
  const relayOf = (isFinal: (e: SseEvent) => boolean) => {
    const written: string[] = [];
    const read: SseEvent[] = [];
    const relay = new SseRelay({
      write: (text) => written.push(text),
      read: (e) => read.push(e),
      isFinal,
      maxEventBytes: 1024,
    });
    return { relay, written, read };
  };

  it('relays events split across chunks, byte for byte, with CRLF line ends', () => {
    const { relay, written, read } = relayOf(() => false);
    const stream = 'event: a\r\ndata: {"x":1}\r\n\r\ndata: two\r\ndata: lines\r\n\r\n';
    for (const chunk of [stream.slice(0, 7), stream.slice(7, 30), stream.slice(30)])
      relay.push(Buffer.from(chunk));
    expect(written.join('') + relay.finish()).toBe(stream);
    expect(read).toEqual([
      { event: 'a', data: '{"x":1}' },
      { event: undefined, data: 'two\nlines' },
    ]);
  });

  it('holds a final event until finish, and lets it go when another follows', () => {
    const { relay, written } = relayOf((e) => e.data === '[DONE]' || e.data === 'last');
    relay.push(Buffer.from('data: 1\n\ndata: [DONE]\n\n'));
    expect(written.join('')).toBe('data: 1\n\n');
    relay.push(Buffer.from('data: late\n\ndata: last\n\n'));
    expect(written.join('')).toBe('data: 1\n\ndata: [DONE]\n\ndata: late\n\n');
    expect(relay.finish()).toBe('data: last\n\n');
  });

  it('keeps a multi-byte character split between chunks intact', () => {
    const { relay, written } = relayOf(() => false);
    const bytes = Buffer.from('data: héllo\n\n');
    relay.push(bytes.subarray(0, 8));
    relay.push(bytes.subarray(8));
    expect(written.join('')).toBe('data: héllo\n\n');
  });

  it('refuses an event that outgrows the bound', () => {
    const { relay } = relayOf(() => false);
    expect(() => {
      relay.push(Buffer.from(`data: ${'x'.repeat(2048)}`));
    }).toThrow(/size limit/);
  });
});
