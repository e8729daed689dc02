import { defineConfig } from 'vite';

// The web pages (docs/adr/0007-web-pages.md): built into dist/web and served by the API server under
// /ui/ (hashed assets, no CDN, no inline script, so the pages' CSP needs no 'unsafe-inline').
export default defineConfig({
  root: import.meta.dirname,
  base: '/ui/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: '../dist/web',
    emptyOutDir: true,
    assetsDir: 'assets',
    // No inline module-preload polyfill: every script is a file of ours (CSP script-src 'self').
    modulePreload: { polyfill: false },
    target: 'es2022',
    sourcemap: true,
  },
});
