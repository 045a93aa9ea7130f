import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { parseNotice } from '../../src/modules/changes/change-feed.js';
import type { ChangeNotice } from '../../src/kernel/change-notice.js';
import { removedRowsVisibleTo } from '../../src/modules/changes/store/change-visibility-store.js';
import { CHANGE_CHANNEL } from '../../src/modules/changes/store/change-notify-store.js';
import { openTestDatabase } from '../helpers/test-database.js';

/**
 * The database announces its own changes: statement-level triggers NOTIFY ids after commit,
 * on both backends, whichever statement wrote them, and never for a rolled-back transaction.
 */

let db: Database;
const payloads: string[] = [];
let stop: () => Promise<void>;

beforeAll(async () => {
  db = await openTestDatabase();
  expect(db.listen).toBeDefined();
  stop = await db.listen!(CHANGE_CHANNEL, (p) => payloads.push(p));
});
afterAll(async () => {
  await stop?.();
  await db?.close();
});

/** Notices that arrive until `done` holds (delivery is asynchronous on native). */
async function noticesUntil(done: (all: ChangeNotice[]) => boolean): Promise<ChangeNotice[]> {
  for (let i = 0; i < 200; i++) {
    // PGlite delivers after a statement; a trivial one flushes what is pending.
    await db.query('SELECT 1');
    const all = payloads.map((p) => parseNotice(p)!);
    if (done(all)) return all;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('notices never arrived');
}

const ids = (all: ChangeNotice[], kind: string) => all.filter((n) => n.kind === kind).flatMap((n) => n.ids);

describe('change notices', () => {
  it('split a large statement into payloads below the NOTIFY limit, losing no id', async () => {
    payloads.length = 0;
    const keys = Array.from({ length: 600 }, (_, i) => `${'k'.repeat(400)}-${i}`);
    await db.query(
      `INSERT INTO entities (namespace, key, kind, title)
       SELECT 'big', k, 'note', k FROM unnest($1::text[]) AS k`,
      [keys],
    );
    const all = await noticesUntil((n) => ids(n, 'ENTITY').length >= keys.length);
    expect(all.length).toBeGreaterThan(20);
    for (const p of payloads) expect(Buffer.byteLength(p)).toBeLessThan(8000);
    expect(ids(all, 'ENTITY').sort()).toEqual([...keys].sort());
    expect(all.every((n) => n.namespace === 'big')).toBe(true);
  });

  it('are sent on commit only, and carry ids, never content', async () => {
    payloads.length = 0;
    await db
      .transaction('t', async (tx) => {
        await tx.query(
          `INSERT INTO entities (namespace, key, kind, title) VALUES ('acme', 'rolled-back', 'note', 'x')`,
        );
        throw new Error('roll back');
      })
      .catch(() => undefined);
    await db.query(
      `INSERT INTO entities (namespace, key, kind, title) VALUES ('acme', 'kept', 'note', 'amethyst')`,
    );
    const all = await noticesUntil((n) => ids(n, 'ENTITY').includes('kept'));
    expect(ids(all, 'ENTITY')).not.toContain('rolled-back');
    expect(payloads.join('')).not.toContain('amethyst');
  });

  it('describe a removed fact by its own and its endpoints’ visibility', async () => {
    payloads.length = 0;
    await db.query(
      `INSERT INTO entities (namespace, key, kind, title, visibility) VALUES
         ('acme', 'open-end', 'note', 'a', '{}'), ('acme', 'w1-end', 'note', 'b', '{workspace:w1}')`,
    );
    await db.query(
      `INSERT INTO facts (namespace, fact_id, subject, predicate, object, valid_from, evidence, confidence)
       VALUES ('acme', 'f-1', 'open-end', 'links', 'w1-end', now(), 'ASSERTED', 1)`,
    );
    await db.query(`DELETE FROM facts WHERE namespace = 'acme' AND fact_id = 'f-1'`);
    const all = await noticesUntil((n) => n.some((x) => x.removed.length > 0));
    const removed = all.flatMap((n) => n.removed);
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
});
