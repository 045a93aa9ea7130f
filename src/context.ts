import type { Principal } from './auth/principal.js';
import { type SqlTrace, countingDatabase } from './db/database.js';
import { type Loaders, createLoaders } from './loaders.js';
import { type Services, createServices } from './services/index.js';
import type { AppDeps } from './services/request-scope.js';

export interface Context {
  principal: Principal;
  services: Services;
  loaders: Loaders;
  sql: SqlTrace;
}

/** One per request: the principal, a statement-counting database view, fresh DataLoaders. */
export function createContext(deps: AppDeps, principal: Principal): Context {
  const sql: SqlTrace = { statements: 0, ms: 0 };
  const db = countingDatabase(deps.db, sql);
  const loaders = createLoaders(db, principal.scopes);
  const services = createServices({ deps, db, principal, loaders });
  return { principal, services, loaders, sql };
}
