// The repository stands alone: every relative link and #anchor in README.md and docs/ resolves,
// every `docs/<file>.md#anchor` a code comment cites names a heading that exists, and no file
// refers to design documents that live outside the repository.
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { anchorsOf, withoutCodeBlocks } from '../support/markdown.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TRACKED = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
  .split('\0')
  .filter((file) => file !== '' && existsSync(join(ROOT, file)));
const DOCUMENTS = TRACKED.filter((file) => file === 'README.md' || /^docs\/.*\.md$/.test(file));
const TEXT = /\.(ts|js|mjs|cjs|sh|md|ya?ml|json|txt|tpl|lua|Dockerfile)$|^\.ci\/run$|Dockerfile$/;

const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

const anchorCache = new Map<string, Set<string>>();
function anchorsOfFile(file: string): Set<string> {
  let anchors = anchorCache.get(file);
  if (anchors === undefined) {
    anchors = anchorsOf(read(file));
    anchorCache.set(file, anchors);
  }
  return anchors;
}

/** Why `target` (a path relative to the repository root, maybe with #anchor) does not resolve. */
function brokenReason(target: string): string | undefined {
  const [path = '', anchor] = target.split('#', 2);
  const file = normalize(path);
  if (file.startsWith('..')) return 'points outside the repository';
  if (!existsSync(join(ROOT, file))) return 'no such file';
  if (anchor === undefined || anchor === '') return undefined;
  if (statSync(join(ROOT, file)).isDirectory() || !file.endsWith('.md'))
    return 'an anchor into a non-Markdown file';
  return anchorsOfFile(file).has(anchor) ? undefined : `no heading with the anchor #${anchor}`;
}

/** The relative link targets of a Markdown document: not URLs, not mail addresses. */
function relativeLinks(markdown: string): string[] {
  const text = withoutCodeBlocks(markdown).replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1] ?? '')
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

describe('links in README.md and docs/', () => {
  it('finds the documents to check', () => {
    expect(DOCUMENTS).toEqual(expect.arrayContaining(['README.md', 'docs/api.md', 'docs/architecture.md']));
  });

  it.each(DOCUMENTS)('%s: every relative link and #anchor resolves', (document) => {
    const broken = relativeLinks(read(document))
      .map((link) => {
        const target = link.startsWith('#')
          ? `${document}${link}`
          : relative(ROOT, join(ROOT, dirname(document), link));
        const reason = brokenReason(target);
        return reason === undefined ? undefined : `${link}: ${reason}`;
      })
      .filter((problem) => problem !== undefined);
    expect(broken).toEqual([]);
  });
});

describe('docs/ sections cited in code', () => {
  const citing = TRACKED.filter((file) => TEXT.test(file) && !file.endsWith('.md'));

  it('every docs/<file>.md#anchor cited in a comment names an existing heading', () => {
    const broken: string[] = [];
    for (const file of citing) {
      for (const match of read(file).matchAll(/\bdocs\/[\w./-]*\w\.md(?:#[\w-]+)?/g)) {
        const reason = brokenReason(match[0]);
        if (reason !== undefined) broken.push(`${file}: ${match[0]}: ${reason}`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('a repository that stands alone', () => {
  // Built from parts, so that this file does not name them itself.
  const OUTSIDE = new RegExp(
    `\\b(?:${['DESIGN', 'CONTRACT', 'SPEC', 'TESTING', 'REALNODE', 'STYLE'].join('|')})\\.md\\b|\\.\\./shared\\b`,
  );

  it('no tracked file refers to design documents outside the repository', () => {
    const offenders = TRACKED.filter((file) => TEXT.test(file) && OUTSIDE.test(read(file)));
    expect(offenders).toEqual([]);
  });
});
