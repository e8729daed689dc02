import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { InstallationKey } from '../../platform/installation-key.js';
import { PromptTokens, promptTokenExpiry } from '../../platform/model-gateway/token.js';
import type { PromptTokenClaims } from '../../platform/model-gateway/token.js';

const NOW_MS = Date.parse('2026-11-22T10:00:00.000Z');
const claims: PromptTokenClaims = {
  namespace: 'agentry-org-acme',
  task: '9b1f4a52-1c1e-4f7e-9d7b-2b0c6b3e8f10',
  prompt: '00000000-0000-4000-8000-000000000001',
  executor: 'claude',
  workspace: 'box',
  exp: Math.ceil(NOW_MS / 1000) + 600,
};
const tokens = new PromptTokens(new InstallationKey(randomBytes(32)));
const token = tokens.issue(claims);

/** The token with one of its three parts replaced. */
const withPart = (index: number, part: string): string =>
  token
    .split('.')
    .map((original, i) => (i === index ? part : original))
    .join('.');

describe('prompt tokens', () => {
  it('are agp1.<claims>.<mac> and verify to their claims', () => {
    expect(token).toMatch(/^agp1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(tokens.verify(token, NOW_MS)).toEqual(claims);
  });

  it('refuse altered claims (another task, signed with the old MAC)', () => {
    const forged = Buffer.from(JSON.stringify({ ...claims, task: 'someone-elses-task' })).toString(
      'base64url',
    );
    expect(tokens.verify(withPart(1, forged), NOW_MS)).toBeUndefined();
  });

  it('refuse an altered MAC', () => {
    const mac = token.split('.')[2] ?? '';
    const flipped = `${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`;
    expect(tokens.verify(withPart(2, flipped), NOW_MS)).toBeUndefined();
    expect(tokens.verify(withPart(2, ''), NOW_MS)).toBeUndefined();
  });

  it('refuse another prefix and other shapes', () => {
    expect(tokens.verify(withPart(0, 'agp2'), NOW_MS)).toBeUndefined();
    expect(tokens.verify(token.split('.').slice(1).join('.'), NOW_MS)).toBeUndefined();
    expect(tokens.verify(`${token}.extra`, NOW_MS)).toBeUndefined();
    expect(tokens.verify('sk-ant-not-a-token', NOW_MS)).toBeUndefined();
  });

  it('refuse a token once it expired, and accept it up to then', () => {
    expect(tokens.verify(token, claims.exp * 1000 - 1)).toEqual(claims);
    expect(tokens.verify(token, claims.exp * 1000)).toBeUndefined();
  });

  it("refuse a token of another installation's key", () => {
    const other = new PromptTokens(new InstallationKey(randomBytes(32)));
    expect(other.verify(token, NOW_MS)).toBeUndefined();
    expect(tokens.verify(other.issue(claims), NOW_MS)).toBeUndefined();
  });

  it('are issued only for claims the schema accepts', () => {
    expect(() => tokens.issue({ ...claims, namespace: '' })).toThrow();
  });

  it("expire 5 minutes after the prompt's time limit", () => {
    expect(promptTokenExpiry(NOW_MS, 3600)).toBe(NOW_MS / 1000 + 3600 + 300);
  });
});
