import { type Authenticate, createTokenAuthenticator, localAuthenticate } from './auth/authenticate.js';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import { openDatabase } from './db/open-database.js';
import { type Logger, createLogger } from './logger.js';
import { createEmbedder } from './providers/create-embedder.js';
import type { Embedder } from './providers/embedder.js';
import { type ServerOptions, createGateway } from './server.js';
import { readPgliteTemplate } from './install/pglite-template.js';
import { createChangeFeed } from './modules/changes/index.js';
import { migrate } from './kernel/store/migrate.js';
import type { AppDeps } from './kernel/request-scope.js';
import { ExtractionWorker } from './modules/extraction/index.js';
import { SummaryRefresher } from './modules/summaries/index.js';
import { assertTextSearchAvailable, resumeTextSearchReindexes } from './modules/text-search/index.js';
import { llmFor } from './providers/llm.js';

export interface App {
  deps: AppDeps;
  gateway: ReturnType<typeof createGateway>;
  /** The authenticator /graphql uses; the WebSocket endpoint applies the same one. */
  authenticate: Authenticate;
  close(): Promise<void>;
}

/** Opens (or adopts) the database, migrates it, and builds the gateway. No ports are opened here. */
export async function createApp(
  config: Config,
  options: ServerOptions & {
    db?: Database;
    embedder?: Embedder;
    logger?: Logger;
    /** Run the model-extraction worker in this process (default: when a model is configured). */
    extractionWorker?: boolean;
    /** Keep entity summaries refreshed from this process (default: config.summaries). */
    summaryRefresher?: boolean;
  } = {},
): Promise<App> {
  const logger = options.logger ?? createLogger(config.logLevel);
  // With a tokens file every request needs a bearer token; a broken file stops start-up here.
  const authenticate =
    options.authenticate ??
    (config.tokensFile ? await createTokenAuthenticator(config.tokensFile, { logger }) : undefined);
  // The embedder first: a fresh embedded folder starts from a template made for its model.
  const embedder =
    options.embedder ??
    (await createEmbedder(config.embedder, {
      dataDir: config.dataDir,
      openaiApiKey: config.openaiApiKey,
      openaiBaseUrl: config.openaiBaseUrl,
      log: (msg) => logger.info(msg),
    }));
  const embedding = { model: embedder.model, dimensions: embedder.dimensions };
  const progress = (msg: string) => logger.info(msg);
  const db =
    options.db ??
    (await openDatabase(config, { template: () => readPgliteTemplate(embedding), log: progress }));
  try {
    const applied = await migrate(db, embedding, {
      onApplied: (name, ms) => progress(`migration ${name} applied in ${Math.round(ms)} ms`),
    });
    if (applied.length) logger.info('migrations applied', { applied });
    await assertTextSearchAvailable(db, config.textSearch);
  } catch (error) {
    await db.close();
    throw error;
  }
  // After a crash, a language change left half done picks up where the process died.
  const resumed = resumeTextSearchReindexes(db, logger);
  const changes = await createChangeFeed(db, logger, {
    perPrincipal: config.maxSubscriptionsPerPrincipal,
    perProcess: config.maxSubscriptions,
  });
  const deps: AppDeps = { db, config, embedder, logger, changes };
  const gateway = createGateway(deps, { ...options, authenticate });
  const llm = llmFor(config);
  const worker =
    llm.available && options.extractionWorker !== false ? new ExtractionWorker(db, llm, logger) : null;
  worker?.start();
  const refresher =
    (options.summaryRefresher ?? config.summaries) && changes ? new SummaryRefresher(deps) : null;
  refresher?.start();
  if (refresher) deps.wakeSummaries = () => refresher.wake();
  return {
    deps,
    gateway,
    authenticate: authenticate ?? localAuthenticate,
    close: async () => {
      await resumed.stop();
      await worker?.stop();
      await refresher?.stop();
      await changes?.close();
      await db.close();
    },
  };
}
