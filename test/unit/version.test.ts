import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { AGENTRY_VERSION } from '../../platform/version.js';

describe('AGENTRY_VERSION', () => {
  it("equals package.json's version", async () => {
    const pkg = z.object({ version: z.string() }).parse(JSON.parse(await readFile('package.json', 'utf8')));
    expect(AGENTRY_VERSION).toBe(pkg.version);
  });
});
