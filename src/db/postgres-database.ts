import pg from 'pg';
import pgvector from 'pgvector/pg';
import { type Database, type QueryResult, type Queryable, toParam } from './database.js';

// int8 counts and ids fit in a double here; both backends then return numbers.
pg.types.setTypeParser(20, (value) => Number(value));

export interface PostgresOptions {
  connectionString: string;
  statementTimeoutMs: number;
  max?: number;
}

export async function openPostgres(options: PostgresOptions): Promise<Database & { pool: pg.Pool }> {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    statement_timeout: options.statementTimeoutMs,
    application_name: 'memgate',
  });
  // The vector type must exist before connections can register it; migrations repeat this harmlessly.
  await pool.query('CREATE EXTENSION IF NOT EXISTS vector');
  await pool.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
  pool.on('connect', (client) => {
    // node-postgres queues per client, so this lookup completes before the caller's first query.
    void pgvector.registerTypes(client).catch(() => undefined);
  });
  const run = async <R>(q: pg.Pool | pg.PoolClient, sql: string, params?: readonly unknown[]) => {
    const result = await q.query(sql, params ? params.map(toParam) : []);
    return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 } satisfies QueryResult<R>;
  };

  const db: Database & { pool: pg.Pool } = {
    backend: 'postgres',
    pool,
    query: (sql, params) => run(pool, sql, params),
    async transaction(_name, fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const tx: Queryable = { query: (sql, params) => run(client, sql, params) };
        const value = await fn(tx);
        await client.query('COMMIT');
        return value;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    async exec(sql) {
      await pool.query(sql);
    },
    close: () => pool.end(),
  };
  return db;
}
