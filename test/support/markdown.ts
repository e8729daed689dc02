/** What the documentation tests read from Markdown: fenced code blocks, sections, headings. */

export interface CodeBlock {
  /** The fence's info string, e.g. `bash` or `sh`; empty when the fence names none. */
  language: string;
  code: string;
  /** The paragraph just above the block, joined to one line: what the block is for. */
  caption: string;
}

const FENCE = /^```(\S*)[^\n]*\n([\s\S]*?)^```\s*$/gm;

/** The fenced code blocks of `markdown`, in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  return [...markdown.matchAll(FENCE)].map((match) => {
    const before = markdown.slice(0, match.index).trimEnd();
    const paragraph = before.slice(before.lastIndexOf('\n\n') + 2);
    return { language: match[1] ?? '', code: match[2] ?? '', caption: paragraph.replace(/\s+/g, ' ').trim() };
  });
}

/** The text of the `## title` section, up to the next heading of level 2 or higher. */
export function section(markdown: string, title: string): string {
  const start = markdown.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`no section "## ${title}"`);
  const next = markdown.slice(start + 1).search(/\n#{1,2} /);
  return next < 0 ? markdown.slice(start) : markdown.slice(start, start + 1 + next);
}

/** Markdown without its fenced code blocks (headings and links inside them are not real). */
export const withoutCodeBlocks = (markdown: string): string => markdown.replace(FENCE, '');

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
export function headingSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a document offers: one per heading, repeated titles numbered as GitHub does. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of withoutCodeBlocks(markdown).matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = headingSlug(match[1] ?? '');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}
