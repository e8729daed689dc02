// The artifact filename rules of docs/api.md#files-and-artifacts, case by case.
import { describe, expect, it } from '@jest/globals';
import {
  MAX_ARTIFACT_NAME_BYTES,
  MAX_ARTIFACT_SEGMENT_BYTES,
  artifactName,
  checkArtifactName,
} from '../../platform/objectstore/artifact-names.js';

const accepted: [string, string][] = [
  ['report.pdf', 'a plain name'],
  ['out/data/result.json', 'a nested relative path'],
  ['.hidden', 'a dot file'],
  ['a..b', 'two dots inside a segment'],
  ['...', 'three dots'],
  ['with space.txt', 'spaces'],
  ['%2e%2e', 'percent signs are just characters here (the route decodes first)'],
  ['日本語/ファイル.txt', 'non-ASCII'],
  ['😀.png', 'astral characters'],
];

const refused: [string, RegExp][] = [
  ['', /empty/],
  ['../x', /"\." or "\.\."/],
  ['a/../b', /"\." or "\.\."/],
  ['x/..', /"\." or "\.\."/],
  ['./x', /"\." or "\.\."/],
  ['/etc/passwd', /relative/],
  ['a\\b', /backslash/],
  ['..\\x', /backslash/],
  ['a\u0000b', /control/],
  ['tab\there', /control/],
  ['line\nbreak', /control/],
  ['del\u007f', /control/],
  ['c1\u0085', /control/],
  ['c1\u009f', /control/],
  ['a//b', /empty path segments/],
  ['dir/', /empty path segments/],
  ['\ud800.txt', /surrogate/],
  ['x'.repeat(MAX_ARTIFACT_SEGMENT_BYTES + 1), /255/],
  [`${'x'.repeat(200)}/`.repeat(6), /empty path segments/],
  [Array.from({ length: 6 }, () => 'x'.repeat(200)).join('/'), /1024/],
  ['é'.repeat(128), /255/], // 128 characters, 256 bytes
];

describe('checkArtifactName', () => {
  it.each(accepted)('accepts %j (%s)', (name) => {
    expect(checkArtifactName(name)).toEqual({ ok: true, name });
  });

  it.each(
    refused.map(
      ([name, reason]) =>
        [name.length > 40 ? `${name.slice(0, 20)}… (${name.length} chars)` : name, name, reason] as const,
    ),
  )('refuses %j', (_title, name, reason) => {
    const checked = checkArtifactName(name);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.reason).toMatch(reason);
  });

  it('normalizes to NFC, so precomposed and decomposed accents name the same artifact', () => {
    const decomposed = 'cafe\u0301.txt';
    expect(checkArtifactName(decomposed)).toEqual({ ok: true, name: 'caf\u00e9.txt' });
    expect(artifactName(decomposed)).toBe(artifactName('caf\u00e9.txt'));
  });

  it('allows exactly the limits: 255 bytes per segment and 1024 in all', () => {
    const segment = 'x'.repeat(MAX_ARTIFACT_SEGMENT_BYTES);
    expect(checkArtifactName(segment).ok).toBe(true);
    const full = [segment, segment, segment, 'x'.repeat(254), 'x'].join('/');
    expect(Buffer.byteLength(full)).toBe(MAX_ARTIFACT_NAME_BYTES);
    expect(checkArtifactName(full).ok).toBe(true);
    expect(checkArtifactName(`${full}x`).ok).toBe(false);
  });

  it('throws from artifactName with the reason', () => {
    expect(() => artifactName('../x')).toThrow(/invalid artifact filename/);
  });
});
