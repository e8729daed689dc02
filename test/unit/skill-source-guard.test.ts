// The SSRF guard on skill sources, checked by classification only: nothing here connects anywhere.
import { describe, expect, it } from '@jest/globals';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchSkillRepository } from '../../runner/skills/skill-fetch.js';

const fetchFrom = (url: string) =>
  fetchSkillRepository(
    join(tmpdir(), 'agentry-skill-guard-never-written'),
    { url },
    false,
    new AbortController().signal,
  );

describe('skill sources where private targets are not allowed', () => {
  it.each([
    ['https://127.0.0.1:1/skill.git', 'a loopback address'],
    ['https://10.1.2.3/skill.git', 'a private address'],
    ['https://169.254.169.254/skill.git', 'the cloud metadata address'],
    ['https://localhost/skill.git', 'a loopback name'],
  ])('refuses %s as %s', async (url, words) => {
    await expect(fetchFrom(url)).rejects.toThrow(words);
  });

  it('refuses plain http', async () => {
    await expect(fetchFrom('http://git.example.com/skill.git')).rejects.toThrow('must use https');
  });

  it('refuses credentials in the URL', async () => {
    await expect(fetchFrom('https://user:token@git.example.com/skill.git')).rejects.toThrow('credentials');
  });
});
