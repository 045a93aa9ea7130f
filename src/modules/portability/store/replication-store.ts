import type { Queryable } from '../../../db/database.js';
import { NAMESPACE_MOVED_STATE } from '../../../db/unavailable.js';
import { ident, join, run, sql } from '../../../kernel/store/sql.js';

/**
 * The SQL of `memgate move --namespace`: logical replication of one namespace from a source
 * server (publication, slot, fence) to a target server (subscription), read from and written to
 * PostgreSQL's catalogs. Publication, subscription, slot and trigger names are made by code
 * (`moveNames`); the namespace and the connection string reach DDL through the server's own
 * `format(%I, %L)`, never through text built here.
 */

/**
 * The tables whose rows belong to one namespace: every table of the schema whose primary key
 * starts with `namespace`, but the change outbox, whose rows name the source's transaction ids
 * (the target's subscribers hear of the namespace's changes from its own writes).
 */
export async function tenantTables(q: Queryable): Promise<string[]> {
  const { rows } = await run<{ name: string }>(
    q,
    sql`/* moveTenantTables */ SELECT c.relname AS name
     FROM pg_index i
     JOIN pg_class c ON c.oid = i.indrelid AND c.relkind = 'r'
     JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
     JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = i.indkey[0]
     WHERE i.indisprimary AND a.attname = 'namespace' AND c.relname <> 'change_outbox'
     ORDER BY c.relname`,
  );
  return rows.map((r) => r.name);
}

/**
 * Work queues: rows of a namespace that say what is still to be done there (extraction jobs,
 * summary refresh marks, a running text-search re-derivation). They move with the namespace;
 * the source's copy is deleted after a move, so the source's workers never take it up again.
 */
export const WORK_QUEUE_TABLES = ['extraction_jobs', 'summary_refresh', 'text_search_reindex'] as const;

export async function walLevel(q: Queryable): Promise<string> {
  const { rows } = await run<{ level: string }>(
    q,
    sql`/* moveWalLevel */ SELECT current_setting('wal_level') AS level`,
  );
  return rows[0]?.level ?? '';
}

/** How many rows the namespace has in each table (tables without any are left out). */
export async function namespaceRows(
  q: Queryable,
  tables: readonly string[],
  namespace: string,
): Promise<Record<string, number>> {
  if (tables.length === 0) return {};
  const counts = join(
    tables.map(
      (t) =>
        sql`SELECT ${t}::text AS name, count(*)::int AS n FROM ${ident(t)} WHERE namespace = ${namespace}`,
    ),
    ' UNION ALL ',
  );
  const { rows } = await run<{ name: string; n: number }>(
    q,
    sql`/* moveNamespaceRows */ SELECT name, n FROM (${counts}) c WHERE n > 0`,
  );
  return Object.fromEntries(rows.map((r) => [r.name, r.n]));
}

/** Runs DDL the server built with `format` (so names and literals are quoted by PostgreSQL). */
async function runBuilt(q: Queryable, built: Promise<{ rows: { ddl: string | null }[] }>): Promise<void> {
  const ddl = (await built).rows[0]?.ddl;
  if (ddl) await q.query(ddl);
}

/**
 * A publication of the namespace's rows in every tenant table. Inserts, updates and deletes
 * only: a TRUNCATE is published whatever the row filter, and would empty the target's table
 * for every namespace.
 */
export async function createPublication(
  q: Queryable,
  name: string,
  tables: readonly string[],
  namespace: string,
): Promise<void> {
  await runBuilt(
    q,
    run<{ ddl: string }>(
      q,
      sql`/* moveBuildPublication */ SELECT format(
         'CREATE PUBLICATION %I FOR TABLE %s WITH (publish = %L)', ${name}::text,
         string_agg(format('%I WHERE (namespace = %L)', t, ${namespace}::text), ', ' ORDER BY t),
         'insert, update, delete') AS ddl
       FROM unnest(${tables}::text[]) t`,
    ),
  );
}

export async function dropPublication(q: Queryable, name: string): Promise<void> {
  await runBuilt(
    q,
    run<{ ddl: string }>(
      q,
      sql`/* moveBuildDropPublication */ SELECT format('DROP PUBLICATION IF EXISTS %I', ${name}::text) AS ddl`,
    ),
  );
}

/**
 * Drops the move's slots on the source: its own and the table-sync slots of its subscription
 * (`pg_<subscription oid>_sync_…`). A slot still held by a walsender has that walsender ended
 * first; returns the slots that remain (held again meanwhile), which the caller retries.
 */
export async function dropSlots(q: Queryable, slot: string, syncPrefix: string | null): Promise<string[]> {
  const like = syncPrefix === null ? null : `${syncPrefix.replaceAll('_', '\\_')}%`;
  const { rows } = await run<{ slot: string; pid: number | null }>(
    q,
    sql`/* moveSlots */ SELECT slot_name AS slot, active_pid AS pid FROM pg_replication_slots
     WHERE database = current_database() AND (slot_name = ${slot} OR slot_name LIKE ${like}::text)`,
  );
  const held = rows.filter((r) => r.pid !== null).map((r) => r.pid);
  if (held.length > 0) {
    await run(
      q,
      sql`/* moveEndWalsenders */ SELECT pg_terminate_backend(pid) FROM unnest(${held}::int[]) pid`,
    );
  }
  const remaining: string[] = [];
  for (const r of rows) {
    const { rows: dropped } = await run<{ ok: boolean }>(
      q,
      sql`/* moveDropSlot */ SELECT pg_drop_replication_slot(slot_name) IS NULL AS ok FROM pg_replication_slots
       WHERE slot_name = ${r.slot} AND NOT active`,
    );
    if (dropped.length === 0) remaining.push(r.slot);
  }
  return remaining;
}

/** The database a replication slot of this name serves, on this server (slot names are server-wide); null: no such slot. */
export async function slotDatabase(q: Queryable, slot: string): Promise<string | null> {
  const { rows } = await run<{ database: string | null }>(
    q,
    sql`/* moveSlotDatabase */ SELECT coalesce(database::text, '(physical)') AS database FROM pg_replication_slots WHERE slot_name = ${slot}`,
  );
  return rows[0]?.database ?? null;
}

export async function databaseName(q: Queryable): Promise<string> {
  const { rows } = await run<{ name: string }>(
    q,
    sql`/* moveDatabaseName */ SELECT current_database() AS name`,
  );
  return rows[0]!.name;
}

/** The source's current WAL position (text, as pg_lsn prints it). */
export async function currentLsn(q: Queryable): Promise<string> {
  const { rows } = await run<{ lsn: string }>(
    q,
    sql`/* moveCurrentLsn */ SELECT pg_current_wal_lsn()::text AS lsn`,
  );
  return rows[0]!.lsn;
}

/** How far the subscriber confirmed (applied and flushed) on the move's slot; null without the slot. */
export async function confirmedLsn(
  q: Queryable,
  slot: string,
  lsn: string,
): Promise<{ caughtUp: boolean; lagBytes: number } | null> {
  const { rows } = await run<{ caughtUp: boolean; lag: string | null }>(
    q,
    sql`/* moveConfirmedLsn */ SELECT coalesce(confirmed_flush_lsn >= ${lsn}::pg_lsn, false) AS "caughtUp",
            pg_wal_lsn_diff(${lsn}::pg_lsn, confirmed_flush_lsn)::text AS lag
     FROM pg_replication_slots WHERE slot_name = ${slot}`,
  );
  const row = rows[0];
  return row ? { caughtUp: row.caughtUp, lagBytes: Math.max(0, Number(row.lag ?? 0)) } : null;
}

// ---- target side -------------------------------------------------------------------------

/**
 * The subscription on the target: copies the namespace's rows (copy_data), then applies the
 * source's changes; its slot on the source has the subscription's name.
 */
export async function createSubscription(
  q: Queryable,
  name: string,
  conninfo: string,
  publication: string,
): Promise<void> {
  await runBuilt(
    q,
    run<{ ddl: string }>(
      q,
      sql`/* moveBuildSubscription */ SELECT format(
         'CREATE SUBSCRIPTION %I CONNECTION %L PUBLICATION %I WITH (copy_data = true, slot_name = %L)',
         ${name}::text, ${conninfo}::text, ${publication}::text, ${name}::text) AS ddl`,
    ),
  );
}

export async function subscriptionOid(q: Queryable, name: string): Promise<number | null> {
  const { rows } = await run<{ oid: number }>(
    q,
    sql`/* moveSubscriptionOid */ SELECT oid::int AS oid FROM pg_subscription
     WHERE subname = ${name} AND subdbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  return rows[0]?.oid ?? null;
}

export interface SyncState {
  tables: number;
  ready: number;
  /** Errors the subscription's workers met (apply and table sync), from pg_stat_subscription_stats. */
  errors: number;
}

/** Initial-copy progress: tables in state 'r' (ready) among the subscription's tables. */
export async function syncState(q: Queryable, name: string): Promise<SyncState> {
  const { rows } = await run<SyncState>(
    q,
    sql`/* moveSyncState */ SELECT
       (SELECT count(*)::int FROM pg_subscription_rel r WHERE r.srsubid = s.oid) AS tables,
       (SELECT count(*)::int FROM pg_subscription_rel r WHERE r.srsubid = s.oid AND r.srsubstate = 'r') AS ready,
       coalesce((SELECT (apply_error_count + sync_error_count)::int FROM pg_stat_subscription_stats t
                 WHERE t.subid = s.oid), 0) AS errors
     FROM pg_subscription s WHERE s.subname = ${name}`,
  );
  return rows[0] ?? { tables: 0, ready: 0, errors: 0 };
}

/** What the target's apply worker has received from the source (null before it started). */
export async function receivedLsn(q: Queryable, name: string, lsn: string): Promise<boolean> {
  const { rows } = await run<{ done: boolean }>(
    q,
    sql`/* moveReceivedLsn */ SELECT coalesce(bool_or(received_lsn >= ${lsn}::pg_lsn), false) AS done
     FROM pg_stat_subscription WHERE subname = ${name} AND relid IS NULL`,
  );
  return rows[0]?.done ?? false;
}

/**
 * Removes the subscription without reaching the source (disable, detach its slot, drop): it
 * works whether the source answers or not, and the slots are dropped on the source by
 * `dropSlots`. A no-op when there is none.
 */
export async function dropSubscription(q: Queryable, name: string): Promise<void> {
  if ((await subscriptionOid(q, name)) === null) return;
  for (const template of [
    'ALTER SUBSCRIPTION %I DISABLE',
    'ALTER SUBSCRIPTION %I SET (slot_name = NONE)',
    'DROP SUBSCRIPTION %I',
  ]) {
    await runBuilt(
      q,
      run<{ ddl: string }>(
        q,
        sql`/* moveBuildDropSubscription */ SELECT format(${template}::text, ${name}::text) AS ddl`,
      ),
    );
  }
}

/**
 * Sequences and identity columns of the tenant tables (chunk ids, audit ids, observation
 * arrival) set past the highest value the table holds, never backwards. Returns what moved.
 */
export async function advanceSequences(
  q: Queryable,
  tables: readonly string[],
): Promise<{ sequence: string; value: string }[]> {
  const { rows: owned } = await run<{ seq: string; tbl: string; col: string }>(
    q,
    sql`/* moveSequences */ SELECT DISTINCT s.oid::regclass::text AS seq, c.relname AS tbl, a.attname AS col
     FROM pg_depend d
     JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
     JOIN pg_class c ON c.oid = d.refobjid
     JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = d.refobjsubid
     WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')
       AND c.relname = ANY(${tables}::text[])
     UNION
     SELECT s.oid::regclass::text, c.relname, a.attname
     FROM pg_attrdef ad
     JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid AND d.refclassid = 'pg_class'::regclass
     JOIN pg_class s ON s.oid = d.refobjid AND s.relkind = 'S'
     JOIN pg_class c ON c.oid = ad.adrelid
     JOIN pg_attribute a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum
     WHERE c.relname = ANY(${tables}::text[])
     ORDER BY 1`,
  );
  const advanced: { sequence: string; value: string }[] = [];
  for (const { seq, tbl, col } of owned) {
    const { rows } = await run<{ value: string }>(
      q,
      sql`/* moveAdvanceSequence */ SELECT setval(${seq}::regclass, x.m)::text AS value
       FROM (SELECT max(${ident(col)}) AS m FROM ${ident(tbl)}) x
       WHERE x.m IS NOT NULL AND x.m > coalesce(pg_sequence_last_value(${seq}::regclass), 0)`,
    );
    if (rows[0]) advanced.push({ sequence: seq, value: rows[0].value });
  }
  return advanced;
}

/**
 * Fresh planner statistics for the tenant tables: rows that arrive by replication are not
 * counted towards autovacuum's analyze threshold as ordinary inserts are at once, and the
 * gateway's plans (the lexical channel's joins among them) follow the statistics.
 */
export async function analyzeTables(q: Queryable, tables: readonly string[]): Promise<void> {
  await run(q, sql`/* moveAnalyze */ ANALYZE ${join(tables.map(ident), ', ')}`);
}

/**
 * A digest of what the export's digest leaves out because indexing derives it: the chunks'
 * vectors, search text and tsvector, the BM25 postings and statistics. Equal on both sides means
 * search ranks the namespace the same on both. Order-independent (a sum of row hashes).
 */
export async function derivedDigest(q: Queryable, namespace: string): Promise<string> {
  const { rows } = await run<{ digest: string }>(
    q,
    sql`/* moveDerivedDigest */ SELECT count(*) || ':' || coalesce(sum(('x' || substr(md5(r), 1, 15))::bit(60)::bigint), 0) AS digest
     FROM (
       SELECT concat_ws('|', 'p', p.ts_config::text, p.lexeme, p.chunk_id, p.tf, p.doc_len, p.label) AS r
       FROM chunk_postings p WHERE p.namespace = ${namespace}
       UNION ALL
       SELECT concat_ws('|', 's', s.ts_config::text, s.doc_count, s.total_len)
       FROM lexical_stats s WHERE s.namespace = ${namespace}
       UNION ALL
       SELECT concat_ws('|', 'c', c.node_key, c.ord, c.chunk_id, c.embedding::text, c.search_text, c.own_search_text,
                        c.ts_config::text, c.tsv::text)
       FROM chunks c WHERE c.namespace = ${namespace}
     ) x`,
  );
  return rows[0]!.digest;
}

// ---- the fence ---------------------------------------------------------------------------

const FENCE_FUNCTION = `/* moveFenceFunction */
  CREATE OR REPLACE FUNCTION memgate_namespace_fenced() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    RAISE EXCEPTION 'namespace "%" is being moved, or was moved, to another server: it is read-only here', TG_ARGV[0]
      USING ERRCODE = '${NAMESPACE_MOVED_STATE}',
            HINT = 'memgate move --namespace: write to the server it moved to.';
  END $$`;

/**
 * Makes the namespace read-only on this server: two row triggers per tenant table refuse any
 * insert, update or delete of its rows (a WHEN clause on the namespace, so other namespaces pay
 * one comparison). Creating a trigger takes a lock that waits for every open transaction that
 * wrote to the table, so once this transaction commits no earlier write of the namespace is
 * still to come. Runs inside the caller's transaction.
 */
export async function createFence(
  q: Queryable,
  trigger: string,
  tables: readonly string[],
  namespace: string,
): Promise<void> {
  await q.query(FENCE_FUNCTION);
  await runBuilt(
    q,
    run<{ ddl: string }>(
      q,
      sql`/* moveBuildFence */ SELECT string_agg(format(
         'CREATE TRIGGER %I BEFORE INSERT OR UPDATE ON %I FOR EACH ROW WHEN (NEW.namespace = %L) '
         'EXECUTE FUNCTION memgate_namespace_fenced(%L); '
         'CREATE TRIGGER %I BEFORE DELETE ON %I FOR EACH ROW WHEN (OLD.namespace = %L) '
         'EXECUTE FUNCTION memgate_namespace_fenced(%L)',
         ${trigger}::text || '_w', t, ${namespace}::text, ${namespace}::text,
         ${trigger}::text || '_d', t, ${namespace}::text, ${namespace}::text), '; ' ORDER BY t) AS ddl
       FROM unnest(${tables}::text[]) t`,
    ),
  );
}

/** The tables on which the namespace's fence triggers exist. */
export async function fencedTables(q: Queryable, trigger: string): Promise<string[]> {
  const { rows } = await run<{ name: string }>(
    q,
    sql`/* moveFencedTables */ SELECT DISTINCT c.relname AS name FROM pg_trigger t
     JOIN pg_class c ON c.oid = t.tgrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
     WHERE t.tgname IN (${trigger}::text || '_w', ${trigger}::text || '_d') ORDER BY 1`,
  );
  return rows.map((r) => r.name);
}

export async function dropFence(q: Queryable, trigger: string, tables: readonly string[]): Promise<void> {
  await runBuilt(
    q,
    run<{ ddl: string }>(
      q,
      sql`/* moveBuildDropFence */ SELECT string_agg(format(
         'DROP TRIGGER IF EXISTS %I ON %I; DROP TRIGGER IF EXISTS %I ON %I',
         ${trigger}::text || '_w', t, ${trigger}::text || '_d', t), '; ' ORDER BY t) AS ddl
       FROM unnest(${tables}::text[]) t`,
    ),
  );
}

/** A lock wait bounded for the fence: writers queue behind it, so it must not wait long. */
export async function boundLockWait(q: Queryable, ms: number): Promise<void> {
  await run(q, sql`/* moveLockTimeout */ SELECT set_config('lock_timeout', ${`${ms}ms`}::text, true)`);
}

/**
 * Deletes the namespace's rows from the given tables, in the caller's transaction, as the
 * replication role does (`session_replication_role = replica`): the fence and the audit log's
 * append-only rule stay silent. A plain DELETE of chunks leaves their postings alone: the
 * postings and statistics are tenant tables, deleted here too. Returns the rows deleted.
 */
export async function deleteNamespaceRows(
  q: Queryable,
  tables: readonly string[],
  namespace: string,
): Promise<number> {
  await run(q, sql`/* moveReplicaRole */ SELECT set_config('session_replication_role', 'replica', true)`);
  let deleted = 0;
  for (const t of tables) {
    const { rowCount } = await run(
      q,
      sql`/* moveDeleteNamespace */ DELETE FROM ${ident(t)} WHERE namespace = ${namespace}`,
    );
    deleted += rowCount;
  }
  return deleted;
}
