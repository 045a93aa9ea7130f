import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_PRINCIPAL } from '../../src/auth/principal.js';
import { parseConfig } from '../../src/config.js';
import type { Database, Queryable } from '../../src/db/database.js';
import { createLoaders } from '../../src/kernel/loaders.js';
import { createLogger } from '../../src/logger.js';
import type { Embedder } from '../../src/providers/embedder.js';
import { createHashingEmbedder } from '../../src/providers/hashing-embedder.js';
import { ObservationService } from '../../src/modules/observations/observation-service.js';
import { TEST_EMBEDDING, openTestDatabase } from '../helpers/test-database.js';

// Failure paths of recordObservations that no well-formed HTTP request can provoke: a statement
// failing inside the multi-row write, and an embedder outage.
describe('recordObservations failure handling', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db?.close();
  });

  /** The database, except that chunk inserts whose payload contains `poison` fail. */
  const faulty = (poison: string): Database => {
    const wrap = (q: Queryable): Queryable => ({
      query: (sql, params) => {
        if (sql.includes('/* insertObservationChunks */') && JSON.stringify(params ?? []).includes(poison)) {
          return Promise.reject(new Error('simulated storage failure'));
        }
        return q.query(sql, params);
      },
    });
    return {
      ...db,
      backend: db.backend,
      query: wrap(db).query,
      transaction: (n, fn) => db.transaction(n, (tx) => fn(wrap(tx))),
    };
  };
  const service = (
    database: Database,
    embedder: Embedder = createHashingEmbedder(TEST_EMBEDDING.dimensions),
  ) =>
    new ObservationService({
      deps: {
        db: database,
        config: parseConfig({ MEMGATE_LOG_LEVEL: 'silent' }),
        embedder,
        logger: createLogger('silent'),
      },
      db: database,
      principal: LOCAL_PRINCIPAL,
      loaders: createLoaders(database, null),
    });
  const obs = (id: string, content: string) => ({
    source: { system: 'fault', externalId: id },
    kind: 'note',
    occurredAt: new Date('2024-01-01T00:00:00Z'),
    content,
  });

  it('a statement failing in the multi-row write costs only its own item, which is kept as FAILED (PARTIAL)', async () => {
    const payload = await service(faulty('BOOM')).recordObservations('ns', [
      obs('a', 'first fine note'),
      obs('b', 'this one goes BOOM'),
      obs('c', 'third fine note'),
    ]);
    expect(payload.results.map((r) => r.status)).toEqual(['CREATED', 'PARTIAL', 'CREATED']);
    expect(payload.partial).toBe(1);
    expect(payload.results[1]!.message).toMatch(/^FAILED: /);
    const { rows } = await db.query<{ id: string; status: string; reason: string | null; chunks: number }>(
      `SELECT o.source_external_id AS id, o.status, o.status_reason AS reason,
              (SELECT count(*) FROM chunks c WHERE c.namespace = o.namespace AND c.observation_id = o.observation_id)::int AS chunks
       FROM observations o WHERE o.namespace = 'ns' AND o.source_system = 'fault' ORDER BY 1`,
    );
    expect(rows).toEqual([
      { id: 'a', status: 'PROCESSED', reason: null, chunks: 1 },
      { id: 'b', status: 'FAILED', reason: 'processing failed with an internal error', chunks: 0 },
      { id: 'c', status: 'PROCESSED', reason: null, chunks: 1 },
    ]);
  });

  it('an embedder outage never loses evidence: chunks are stored without vectors and the items say so', async () => {
    const broken: Embedder = {
      model: 'broken',
      dimensions: TEST_EMBEDDING.dimensions,
      embed: () => Promise.reject(new Error('down')),
    };
    const payload = await service(db, broken).recordObservations('ns', [obs('d', 'embedder is down')]);
    expect(payload.results[0]).toMatchObject({ status: 'CREATED' });
    expect(payload.results[0]!.message).toMatch(/without an embedding.*reindex/);
    const { rows } = await db.query<{ embedded: boolean; postings: number }>(
      `SELECT c.embedding IS NOT NULL AS embedded,
              (SELECT count(*) FROM chunk_postings p WHERE p.namespace = c.namespace AND p.chunk_id = c.chunk_id)::int AS postings
       FROM chunks c WHERE c.namespace = 'ns' AND c.observation_id = $1`,
      [payload.results[0]!.key],
    );
    // Still found lexically.
    expect(rows).toHaveLength(1);
    expect(rows[0]!.embedded).toBe(false);
    expect(rows[0]!.postings).toBeGreaterThan(0);
  });
});
