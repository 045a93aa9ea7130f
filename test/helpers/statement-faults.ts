import type { Database } from '../../src/db/database.js';

export interface StatementFaults {
  /** Statements (by their leading `/* name *\/` comment) that fail, as a broken index would. */
  fail?: readonly string[];
  /** Statements that answer only after this many milliseconds (a slow plan, a lock wait). */
  delay?: Readonly<Record<string, number>>;
}

/**
 * The real database, with faults injected into named statements only: every other statement
 * is served by PostgreSQL as usual.
 */
export function withStatementFaults(db: Database, faults: StatementFaults): Database {
  const named = (sql: string, name: string) => sql.trimStart().startsWith(`/* ${name} */`);
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === 'query') {
        return async (sql: string, params?: readonly unknown[]) => {
          if (faults.fail?.some((n) => named(sql, n))) throw new Error('injected statement failure');
          const delay = Object.entries(faults.delay ?? {}).find(([n]) => named(sql, n))?.[1];
          if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
          return target.query(sql, params);
        };
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
