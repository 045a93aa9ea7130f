import type { Principal } from './auth/principal.js';
import { type Queryable, type SqlTrace, countingDatabase, readRoute } from './db/database.js';
import { type Loaders, createLoaders } from './kernel/loaders.js';
import { type Services, createServices } from './services.js';
import type { AppDeps } from './kernel/request-scope.js';

export interface Context {
  principal: Principal;
  services: Services;
  loaders: Loaders;
  sql: SqlTrace;
  /**
   * Sends this request's queries to a read replica (null: back to the primary); set before a
   * query operation executes (src/read-routing.ts). Writes always go to the primary.
   */
  routeReads(reader: Queryable | null): void;
  /**
   * Fresh loaders and services for the same principal, on the context it is called on (yoga
   * copies the context's fields onto its own object: that copy is what resolvers read). A
   * subscription lives for many events; each is read anew, so no cached row outlives the
   * change that replaced it and no cache grows for the subscription's life.
   */
  refresh(this: Context): void;
  /**
   * Whether the request's credentials still hold, asked by long-lived operations: false once
   * its token is revoked or its rights changed. Absent: credentials that cannot change.
   */
  stillAuthorized?: () => Promise<boolean>;
  /**
   * The same question answered from the credentials the gateway holds now, without I/O: asked
   * before every subscription event, so none leaves once a revocation is known.
   */
  authorizedNow?: () => boolean;
}

/** One per request: the principal, a statement-counting database view, fresh DataLoaders. */
export function createContext(
  deps: AppDeps,
  principal: Principal,
  checks: Pick<Context, 'stillAuthorized' | 'authorizedNow'> = {},
): Context {
  const context: Context = {
    principal,
    ...checks,
    ...requestParts(deps, principal),
    refresh(this: Context) {
      Object.assign(this, requestParts(deps, principal));
    },
  };
  return context;
}

function requestParts(deps: AppDeps, principal: Principal) {
  const sql: SqlTrace = { statements: 0, ms: 0 };
  const route = readRoute(deps.db);
  const db = countingDatabase(route.db, sql);
  const loaders = createLoaders(db, principal.scopes);
  const services = createServices({ deps, db, principal, loaders });
  return { services, loaders, sql, routeReads: route.to };
}
