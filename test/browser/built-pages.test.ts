import { describe, expect, it } from '@jest/globals';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { builtPagesRoot } from './harness/built-pages.js';

// The CSP (script-src 'self'; style-src 'self') holds only if the build inlines nothing: the
// pages' shell as `npm run build` makes it names its scripts and styles as files under /ui/assets/.

describe('the built pages', () => {
  it('have no inline script or style in the shell, only files under /ui/assets/', async () => {
    const shell = await readFile(join(builtPagesRoot(), 'index.html'), 'utf8');
    const scripts = [...shell.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/\bsrc="\/ui\/assets\/[^"]+\.js"/);
      expect(body?.trim()).toBe('');
    }
    expect(shell).not.toMatch(/<style\b/);
    expect(shell).not.toMatch(/\sstyle="/);
    expect(shell).not.toMatch(/\son[a-z]+="/);
    expect(shell).toMatch(/<link rel="stylesheet"[^>]*href="\/ui\/assets\/[^"]+\.css"/);
  });

  it('split every page into its own chunk', async () => {
    const assets = await readdir(join(builtPagesRoot(), 'assets'));
    for (const page of [
      'tasks-page',
      'task-page',
      'share-page',
      'workspaces-page',
      'lake-page',
      'sign-in-page',
    ])
      expect(assets.some((name) => name.startsWith(`${page}-`) && name.endsWith('.js'))).toBe(true);
  });
});
