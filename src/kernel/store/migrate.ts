import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database, Queryable } from '../../db/database.js';
import { run, sql } from './sql.js';

const migrationsDir = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

export interface EmbeddingSettings {
  model: string;
  dimensions: number;
}

export class EmbeddingMismatchError extends Error {
  constructor(stored: EmbeddingSettings, wanted: EmbeddingSettings) {
    super(
      `This database was built with the embedding model "${stored.model}" (${stored.dimensions} dimensions), ` +
        `but the gateway is configured for "${wanted.model}" (${wanted.dimensions} dimensions). ` +
        `Either set MEMGATE_EMBEDDER back to the model the database was built with, or re-embed everything ` +
        `with the new model: \`npx memgate reindex\` (same variables), then start again.`,
    );
  }
}

/**
 * The migrations in order, each with its `\ir <file>` lines (psql's include, relative to this
 * folder) replaced by that file: definitions kept in one file (functions/) that several
 * migrations re-apply. The expanded text is what runs and what the template hash covers.
 */
export function migrationFiles(): { name: string; sql: string }[] {
  return readdirSync(migrationsDir)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((name) => ({ name, sql: withIncludes(readFileSync(join(migrationsDir, name), 'utf8'), name) }));
}

function withIncludes(sql: string, migration: string): string {
  return sql.replace(/^\\ir[ \t]+(\S+)[ \t]*$/gm, (_line, path: string) => {
    const file = normalize(path);
    if (file.startsWith('..') || file.startsWith('/') || !file.endsWith('.sql')) {
      throw new Error(`${migration}: \\ir ${path} must name a .sql file inside the migrations folder`);
    }
    return readFileSync(join(migrationsDir, file), 'utf8');
  });
}

/** What migrating needs of a database: statements, and scripts of several. */
type Migratable = Queryable & { exec(sql: string): Promise<void> };

/** The advisory lock that lets one process at a time migrate a PostgreSQL database. */
const MIGRATION_LOCK = 7_337_001;

export interface MigrateOptions {
  onApplied?: (name: string, ms: number) => void;
}

/**
 * Applies pending migrations in order, each in its own transaction, and records them.
 * Files are idempotent too, so a crash between apply and record is harmless. On native
 * PostgreSQL it holds an advisory lock meanwhile: gateways started together migrate one after
 * the other, and the later ones find nothing left to do.
 */
export async function migrate(
  db: Database,
  embedding: EmbeddingSettings,
  options: MigrateOptions = {},
): Promise<string[]> {
  if (!db.session) return applyMigrations(db, embedding, options);
  return db.session(async (q) => {
    await q.query(`/* takeMigrationLock */ SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
    try {
      return await applyMigrations(
        { query: q.query, exec: async (text) => void (await q.query(text)) },
        embedding,
        options,
      );
    } finally {
      await q
        .query(`/* releaseMigrationLock */ SELECT pg_advisory_unlock(${MIGRATION_LOCK})`)
        .catch(() => undefined);
    }
  });
}

async function applyMigrations(
  db: Migratable,
  embedding: EmbeddingSettings,
  options: MigrateOptions,
): Promise<string[]> {
  await db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    name text PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`);
  const stored = await readEmbeddingSettings(db);
  // The vector column's dimension is fixed by the first migration; later starts must agree.
  const dimensions = stored?.dimensions ?? embedding.dimensions;
  if (stored) assertSameEmbedding(stored, embedding);

  const done = new Set(
    (await db.query<{ name: string }>('/* appliedMigrations */ SELECT name FROM schema_migrations')).rows.map(
      (r) => r.name,
    ),
  );
  const applied: string[] = [];
  for (const file of migrationFiles()) {
    if (done.has(file.name)) continue;
    const sql = file.sql.replaceAll('{{EMBEDDING_DIM}}', String(dimensions));
    const started = performance.now();
    await db.exec(
      `BEGIN;\n${sql}\n;INSERT INTO schema_migrations (name) VALUES ('${file.name}') ON CONFLICT DO NOTHING;\nCOMMIT;`,
    );
    applied.push(file.name);
    options.onApplied?.(file.name, performance.now() - started);
  }
  if (!stored) {
    await run(
      db,
      sql`/* recordEmbeddingSettings */
       INSERT INTO memgate_settings (embedding_model, embedding_dim) VALUES (${embedding.model}, ${embedding.dimensions})
       ON CONFLICT (singleton) DO NOTHING`,
    );
  }
  return applied;
}

export function assertSameEmbedding(stored: EmbeddingSettings, wanted: EmbeddingSettings): void {
  if (stored.model !== wanted.model || stored.dimensions !== wanted.dimensions) {
    throw new EmbeddingMismatchError(stored, wanted);
  }
}

export async function readEmbeddingSettings(db: Queryable): Promise<EmbeddingSettings | null> {
  const exists = await db.query<{ present: boolean }>(
    `/* settingsTableExists */ SELECT to_regclass('memgate_settings') IS NOT NULL AS present`,
  );
  if (!exists.rows[0]?.present) return null;
  const row = await db.query<{ model: string; dimensions: number }>(
    `/* readEmbeddingSettings */ SELECT embedding_model AS model, embedding_dim AS dimensions FROM memgate_settings`,
  );
  return row.rows[0] ?? null;
}

/** Answers once the database answers a trivial statement (the readiness probe). */
export async function pingDatabase(db: Database): Promise<void> {
  await db.query('/* readiness */ SELECT 1');
}

export async function pendingMigrations(db: Database): Promise<string[]> {
  const exists = await db.query<{ present: boolean }>(
    `/* migrationsTableExists */ SELECT to_regclass('schema_migrations') IS NOT NULL AS present`,
  );
  const done = exists.rows[0]?.present
    ? new Set(
        (
          await db.query<{ name: string }>('/* appliedMigrations */ SELECT name FROM schema_migrations')
        ).rows.map((r) => r.name),
      )
    : new Set<string>();
  return migrationFiles()
    .map((f) => f.name)
    .filter((n) => !done.has(n));
}
