import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHANGE_CHANNEL, outboxRows } from '../../src/db/change-outbox.js';
import type { Database } from '../../src/db/database.js';
import type { ChangeFeed, ChangeNotice } from '../../src/kernel/change-notice.js';
import { noteChanges } from '../../src/kernel/change-notice.js';
import { deleteFactsOfEntity } from '../../src/kernel/store/fact-store.js';
import { createLogger } from '../../src/logger.js';
import { createChangeFeed } from '../../src/modules/changes/change-feed.js';
import { removedRowsVisibleTo } from '../../src/modules/changes/store/change-visibility-store.js';
import { pruneOutbox } from '../../src/modules/changes/store/change-outbox-store.js';
import { onNativePostgres, openTestDatabase } from '../helpers/test-database.js';

/**
 * Change notices travel through an outbox: a write notes what it changed, its transaction appends
 * the notes before COMMIT, and every feed reads what committed since its last read. A change is
 * heard if and only if it committed, once, however transactions interleave, and a feed that
 * missed its wake-up catches up.
 */

let db: Database;
let feed: ChangeFeed;
let heard: ChangeNotice[] = [];

beforeAll(async () => {
  db = await openTestDatabase();
  feed = (await createChangeFeed(db, createLogger('error'), { perPrincipal: 10, perProcess: 10 }))!;
  feed.observe((n) => heard.push(n));
});
afterAll(async () => {
  await feed?.close();
  await db?.close();
});

const entity = (namespace: string, ...ids: string[]): ChangeNotice => ({
  namespace,
  kind: 'ENTITY',
  ids,
  removed: [],
});
const idsHeard = (kind = 'ENTITY') => heard.filter((n) => n.kind === kind).flatMap((n) => n.ids);

async function insertEntity(q: Parameters<typeof noteChanges>[0], key: string): Promise<void> {
  await q.query(`INSERT INTO entities (namespace, key, kind, title) VALUES ('acme', $1, 'note', $1)`, [key]);
  await noteChanges(q, [entity('acme', key)]);
}

describe('change outbox', () => {
  it('a committed transaction is heard once; a rolled-back one never', async () => {
    heard = [];
    await db
      .transaction('t', async (tx) => {
        await insertEntity(tx, 'rolled-back');
        throw new Error('roll back');
      })
      .catch(() => undefined);
    await db.transaction('t', (tx) => insertEntity(tx, 'kept'));
    await feed.catchUp();
    await feed.catchUp();
    expect(idsHeard()).toEqual(['kept']);
  });

  it('a commit that wrote the outbox wakes every listener with an empty payload', async () => {
    const wakeUps: string[] = [];
    const stop = await db.listen!(CHANGE_CHANNEL, (payload) => wakeUps.push(payload));
    try {
      await db.transaction('t', (tx) => insertEntity(tx, 'wakes'));
      for (let i = 0; i < 100 && wakeUps.length === 0; i++) {
        await db.query('SELECT 1'); // PGlite delivers after a statement
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(wakeUps).toContain('');
    } finally {
      await stop();
    }
  });

  it('a write outside any transaction is heard after it', async () => {
    heard = [];
    await insertEntity(db, 'autocommitted');
    await feed.catchUp();
    expect(idsHeard()).toEqual(['autocommitted']);
  });

  it('a large write is split into rows of at most 500 ids, none lost', async () => {
    heard = [];
    const keys = Array.from({ length: 1_203 }, (_, i) => `many-${i}`);
    expect(outboxRows([entity('big', ...keys)]).map((r) => r.ids.length)).toEqual([500, 500, 203]);
    await db.transaction('t', (tx) =>
      noteChanges(tx, [entity('big', ...keys.slice(0, 600)), entity('big', ...keys.slice(600))]),
    );
    await feed.catchUp();
    expect(heard.every((n) => n.ids.length <= 500)).toBe(true);
    expect(idsHeard().sort()).toEqual([...keys].sort());
  });

  it('a row committed without a wake-up is read by the next poll', async () => {
    heard = [];
    await db.query(`INSERT INTO change_outbox (namespace, kind, ids) VALUES ('acme', 'FACT', '{quiet}')`);
    for (let i = 0; i < 40 && idsHeard('FACT').length === 0; i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(idsHeard('FACT')).toEqual(['quiet']);
  });

  it('a removed fact carries its own and its endpoints’ visibility', async () => {
    heard = [];
    await db.query(
      `INSERT INTO entities (namespace, key, kind, title, visibility) VALUES
         ('acme', 'open-end', 'note', 'a', '{}'), ('acme', 'w1-end', 'note', 'b', '{workspace:w1}')`,
    );
    await db.query(
      `INSERT INTO facts (namespace, fact_id, subject, predicate, object, valid_from, evidence, confidence)
       VALUES ('acme', 'f-1', 'open-end', 'links', 'w1-end', now(), 'ASSERTED', 1)`,
    );
    await db.transaction('t', (tx) => deleteFactsOfEntity(tx, 'acme', 'open-end', null));
    await feed.catchUp();
    const removed = heard.flatMap((n) => n.removed);
    expect(removed).toEqual([{ id: 'f-1', vis: [[], [], ['workspace:w1']], refs: ['open-end', 'w1-end'] }]);
    // The same predicate as every read decides who may hear of it.
    expect(await removedRowsVisibleTo(db, removed, ['workspace:w1'])).toEqual(new Set(['f-1']));
    expect(await removedRowsVisibleTo(db, removed, ['workspace:w2'])).toEqual(new Set());
    expect(await removedRowsVisibleTo(db, removed, null)).toEqual(new Set(['f-1']));
    // An endpoint already gone is known to unrestricted principals only.
    const orphan = [{ id: 'f-2', vis: [[], null] }];
    expect(await removedRowsVisibleTo(db, orphan, [])).toEqual(new Set());
    expect(await removedRowsVisibleTo(db, orphan, null)).toEqual(new Set(['f-2']));
  });

  it('rows older than the retention are pruned', async () => {
    await db.query(
      `INSERT INTO change_outbox (namespace, kind, ids, created_at) VALUES ('acme', 'FACT', '{old}', now() - interval '2 hours')`,
    );
    expect(await pruneOutbox(db, 3_600)).toBeGreaterThanOrEqual(1);
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM change_outbox WHERE 'old' = ANY(ids)`,
    );
    expect(rows[0]!.n).toBe(0);
  });

  it.runIf(onNativePostgres)('a write made while the listener is cut off is still heard, once', async () => {
    heard = [];
    await db.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'memgate-listen'`,
    );
    await db.transaction('t', (tx) => insertEntity(tx, 'while-deaf'));
    for (let i = 0; i < 50 && !idsHeard().includes('while-deaf'); i++)
      await new Promise((r) => setTimeout(r, 100));
    await feed.catchUp();
    expect(idsHeard()).toEqual(['while-deaf']);
  });

  // Concurrent transactions need two connections: native PostgreSQL only.
  it.runIf(onNativePostgres)(
    'a transaction that commits after a later one is still heard, once',
    async () => {
      heard = [];
      let commitFirst!: () => void;
      const held = new Promise<void>((resolve) => (commitFirst = resolve));
      let begun!: () => void;
      const started = new Promise<void>((resolve) => (begun = resolve));
      const early = db.transaction('early', async (tx) => {
        await tx.query('SELECT pg_current_xact_id()');
        await insertEntity(tx, 'early');
        begun();
        await held;
      });
      await started;
      await db.transaction('late', (tx) => insertEntity(tx, 'late'));
      await feed.catchUp();
      expect(idsHeard()).toEqual(['late']);
      commitFirst();
      await early;
      await feed.catchUp();
      await feed.catchUp();
      expect(idsHeard()).toEqual(['late', 'early']);
    },
  );
});
