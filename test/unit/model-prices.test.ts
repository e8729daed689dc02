import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ModelPrices, loadModelPrices } from '../../platform/model-prices.js';

const tokens = (input: number, output: number, cacheRead = 0, cacheWrite = 0) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: cacheRead,
  cacheWriteTokens: cacheWrite,
});

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-prices-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('model prices', () => {
  it('prices a dated model name by its family prefix', () => {
    // 1M input × $3 + 1M output × $15 (claude-sonnet-4).
    expect(new ModelPrices().costOf('claude-sonnet-4-5-20250929', tokens(1e6, 1e6))).toBe(18);
  });

  it('takes the longest matching prefix (gpt-5-mini, not gpt-5)', () => {
    expect(new ModelPrices().priceOf('gpt-5-mini-2025-08-07')?.model).toBe('gpt-5-mini');
    expect(new ModelPrices().priceOf('gpt-5-2025-08-07')?.model).toBe('gpt-5');
  });

  it('prices cache reads and writes at their own rates, within the input', () => {
    // 100 fresh × 3 + 1000 read × 0.3 + 200 written × 3.75 + 50 out × 15, per million.
    expect(new ModelPrices().costOf('claude-sonnet-4-5', tokens(1300, 50, 1000, 200))).toBeCloseTo(
      0.0021,
      12,
    );
  });

  it('prices a Gemini model named as a resource (models/…)', () => {
    expect(new ModelPrices().priceOf('models/gemini-2.5-pro')?.model).toBe('gemini-2.5-pro');
  });

  it('leaves a model it does not list unpriced', () => {
    expect(new ModelPrices().costOf('llama-4', tokens(10, 10))).toBeUndefined();
  });

  it('lets the prices file replace a built-in and add a model', async () => {
    const file = join(dir, 'prices.yaml');
    await writeFile(
      file,
      'prices:\n  - { model: claude-sonnet-4, inputPerMillion: 1, outputPerMillion: 2 }\n  - { model: llama-4, inputPerMillion: 0.5, outputPerMillion: 0.5 }\n',
    );
    const prices = await loadModelPrices(file);
    expect(prices.costOf('claude-sonnet-4-5', tokens(1e6, 1e6))).toBe(3);
    expect(prices.costOf('llama-4-scout', tokens(1e6, 0))).toBe(0.5);
    expect(prices.priceOf('claude-opus-4-5')?.inputPerMillion).toBe(5);
  });

  it('refuses a prices file with a negative price, naming the file', async () => {
    const file = join(dir, 'bad.json');
    await writeFile(
      file,
      JSON.stringify({ prices: [{ model: 'x', inputPerMillion: -1, outputPerMillion: 1 }] }),
    );
    await expect(loadModelPrices(file)).rejects.toThrow(/invalid model prices file .*bad\.json/);
  });
});
