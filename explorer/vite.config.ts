import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

/**
 * The explorer page: one static bundle under /explore/, built into dist/explorer by
 * `npm run build` (and so by `npm install`'s prepare). Every asset is local: no CDN.
 */
export default defineConfig({
  root: here,
  base: '/explore/',
  logLevel: 'warn',
  publicDir: false,
  build: {
    outDir: fileURLToPath(new URL('../dist/explorer', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // Assets stay files under /explore/assets/ (the icon included), never inlined as data: URLs.
    assetsInlineLimit: 0,
    // cytoscape alone is ~400 kB minified; the gzipped budget is checked by the build script.
    chunkSizeWarningLimit: 1024,
  },
});
