/**
 * A migrated, empty PGlite database saved at install time. initdb plus the migrations take
 * 10–25 s in WASM on a small machine; loading this dump into a fresh data folder takes ~1 s.
 * The file name is a hash of the migration files and the embedding settings, so a template
 * built for other migrations or another model is simply not found (and the slow path runs).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ASSETS_DIR } from '../assets.js';
import { openPglite } from '../db/pglite-database.js';
import { type EmbeddingSettings, migrate, migrationFiles } from '../kernel/store/migrate.js';

export function pgliteTemplatePath(embedding: EmbeddingSettings, dir = ASSETS_DIR): string {
  const hash = createHash('sha256');
  for (const file of migrationFiles()) hash.update(file.name).update(file.sql);
  hash.update(JSON.stringify({ model: embedding.model, dimensions: embedding.dimensions }));
  return join(dir, `pglite-template-${hash.digest('hex').slice(0, 16)}.tar.gz`);
}

/** The template for these settings as a Blob for PGlite's `loadDataDir`, or undefined when none was built. */
export function readPgliteTemplate(embedding: EmbeddingSettings): Blob | undefined {
  const path = pgliteTemplatePath(embedding);
  return existsSync(path) ? new Blob([readFileSync(path)]) : undefined;
}

/** Builds the template (in memory, then one gzip dump); returns its path. */
export async function buildPgliteTemplate(
  embedding: EmbeddingSettings,
  log: (msg: string) => void,
  dir = ASSETS_DIR,
): Promise<string> {
  const path = pgliteTemplatePath(embedding, dir);
  const db = await openPglite({});
  try {
    await migrate(db, embedding, { onApplied: (name, ms) => log(`  ${name} (${Math.round(ms)} ms)`) });
    const dump = await db.pglite.dumpDataDir('gzip');
    mkdirSync(dir, { recursive: true });
    const temp = `${path}.${process.pid}.tmp`;
    writeFileSync(temp, Buffer.from(await dump.arrayBuffer()));
    renameSync(temp, path);
  } finally {
    await db.close();
  }
  return path;
}
