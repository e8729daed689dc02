import { describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTools } from '../cluster/harness/tools.js';

describe('the cluster harness without Go', () => {
  it('fails with a message that says what to install, never skipping', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentry-nogo-'));
    try {
      await expect(buildTools(join(dir, 'tools.env'), { PATH: dir })).rejects.toThrow(
        /need go: install Go 1\.26 or newer/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
