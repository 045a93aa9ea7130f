import type { Principal } from '../auth/principal.js';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { Loaders } from './loaders.js';
import type { Logger } from '../logger.js';
import type { Embedder } from '../providers/embedder.js';
import type { ChangeFeed } from './change-notice.js';

/** Long-lived parts shared by every request. */
export interface AppDeps {
  db: Database;
  config: Config;
  embedder: Embedder;
  logger: Logger;
  /** Committed writes for live subscribers; absent where nobody can subscribe (CLI). */
  changes?: ChangeFeed;
  /** Wakes this process's summary refresher (marks made outside the change feed); absent when it does not run. */
  wakeSummaries?: () => void;
}

/** What one request's services work with: its principal, its counted database, its loaders. */
export interface RequestScope {
  deps: AppDeps;
  db: Database;
  principal: Principal;
  loaders: Loaders;
}
