import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { ignoredFieldsWarning, parseLenient } from '../../api/lenient-body.js';

const Body = z.strictObject({
  prompt: z.string(),
  files: z.array(z.strictObject({ id: z.string() })).optional(),
});

describe('parseLenient', () => {
  it('drops unknown fields at any depth and names them by path', () => {
    const parsed = parseLenient(Body, { prompt: 'x', mcpServers: {}, files: [{ id: 'a', size: 1 }] });
    expect(parsed).toEqual({
      success: true,
      data: { prompt: 'x', files: [{ id: 'a' }] },
      ignored: expect.arrayContaining(['mcpServers', 'files.0.size']),
    });
    expect(parsed.success && parsed.ignored).toHaveLength(2);
  });

  it('keeps a type error of a known field an error, without the unknown field in it', () => {
    const parsed = parseLenient(Body, { prompt: 1, extra: true });
    expect(parsed.success).toBe(false);
    if (!parsed.success) expect(parsed.issues.map((issue) => issue.path.join('.'))).toEqual(['prompt']);
  });

  it('leaves the value it was given untouched', () => {
    const body = { prompt: 'x', extra: true };
    parseLenient(Body, body);
    expect(body).toEqual({ prompt: 'x', extra: true });
  });
});

describe('ignoredFieldsWarning', () => {
  it('is a 299 warning with names safe for a header, and says how many more there were', () => {
    const names = ['a"b', 'ü', ...Array.from({ length: 20 }, (_v, i) => `f${i}`)];
    const warning = ignoredFieldsWarning(names);
    expect(warning).toMatch(/^299 agentry "ignored unknown fields: a\?b, \?, f0, /);
    expect(warning).toMatch(/ and 2 more"$/);
  });
});
