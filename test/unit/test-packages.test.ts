import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { REQUIRED_COMMANDS } from '../realnode/harness/host.js';

const ciPackages = async (): Promise<Set<string>> =>
  new Set((await readFile('scripts/test-packages.txt', 'utf8')).split('\n').filter((p) => p !== ''));

describe("CI's package list (scripts/test-packages.txt)", () => {
  it('names every Debian package the real node requires, so a fresh machine installs it before the tests', async () => {
    const listed = await ciPackages();
    const required = [...new Set(Object.values(REQUIRED_COMMANDS))].sort();
    expect(required.filter((pkg) => !listed.has(pkg))).toEqual([]);
  });
});
