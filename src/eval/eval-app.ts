import { type App, createApp } from '../app.js';
import { parseConfig } from '../config.js';
import { openPglite } from '../db/pglite-database.js';
import { openPostgres } from '../db/postgres-database.js';
import { createLogger } from '../logger.js';
import { createEmbedder } from '../providers/create-embedder.js';

export interface EvalAppOptions {
  /** Holds the embedding cache; the database itself is in memory unless databaseUrl is set. */
  dataDir: string;
  /** Embedder spec as MEMGATE_EMBEDDER takes it (default offline). */
  embedder?: string;
  /** A PostgreSQL server to evaluate on instead of an in-memory PGlite. */
  databaseUrl?: string;
  log?: (message: string) => void;
}

/** The gateway app a quality harness runs against: the real services over a throwaway database. */
export async function openEvalApp(options: EvalAppOptions): Promise<App> {
  const embedderSpec = options.embedder ?? 'offline';
  const config = parseConfig({
    MEMGATE_DATA_DIR: options.dataDir,
    MEMGATE_EMBEDDER: embedderSpec,
    MEMGATE_LOG_LEVEL: 'warn',
  });
  const logger = createLogger('warn', (line) => process.stderr.write(line));
  const embedder = await createEmbedder(embedderSpec, {
    dataDir: options.dataDir,
    log: options.log ?? (() => {}),
  });
  const db = options.databaseUrl
    ? await openPostgres({ connectionString: options.databaseUrl, statementTimeoutMs: 60_000 })
    : await openPglite({});
  return createApp(config, { db, embedder, logger });
}
