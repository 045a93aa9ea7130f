/**
 * `npm run prepare` (run by `npm install` and `npm ci` after the TypeScript build): derives
 * what a first start would otherwise build, so `npm start` on a fresh clone answers within
 * seconds — the offline embedding cache and a migrated PGlite template for the default embedder.
 * Each step is skipped when its output is already valid.
 */
import { existsSync } from 'node:fs';
import { ASSETS_DIR, prebuiltWordVectorsPath } from '../assets.js';
import { loadWordVectors } from '../providers/embedding-cache.js';
import { OFFLINE_MODEL } from '../providers/offline-embedder.js';
import { buildPgliteTemplate, pgliteTemplatePath } from './pglite-template.js';

const log = (msg: string) => process.stdout.write(`memgate prepare: ${msg}\n`);

async function prepare(): Promise<void> {
  const started = performance.now();
  const cachePath = prebuiltWordVectorsPath();
  // The assets folder is laid out like a data folder, so the usual cache logic builds it.
  const vectors = await loadWordVectors({ dataDir: ASSETS_DIR, log });
  log(`embedding cache ready: ${cachePath} (${vectors.words.length} words)`);

  const embedding = { model: OFFLINE_MODEL, dimensions: vectors.dimensions };
  const templatePath = pgliteTemplatePath(embedding);
  if (existsSync(templatePath)) {
    log(`database template up to date: ${templatePath}`);
  } else {
    log('building the embedded database template (initdb + migrations, once per install)…');
    await buildPgliteTemplate(embedding, log);
    log(`database template ready: ${templatePath}`);
  }
  log(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

await prepare();
