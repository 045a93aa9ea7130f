/**
 * The write floor: the rows one recordObservations batch stored (observations, their node
 * entities, their chunks with vectors and their contextual search text, the entity links the
 * batch derived), read back and inserted again by hand — four multi-row INSERT … VALUES in one
 * statement, into a namespace of their own — so the gateway's write rate can be read against
 * what the same rows cost the database alone (the same indexes, the same postings CTEs; no
 * GraphQL, no services, no embedding). Reading the rows back is not timed. The scenario's
 * batches open streams of their own, so no older turn's index changes (nothing to re-write).
 * The vectors are nudged (see `unseenVector`): pgvector's HNSW insert attaches an exact
 * duplicate of an indexed vector to the existing element without searching the graph, so
 * re-inserting the gateway's own vectors would make the floor cheaper than any new write.
 */
import { postedChunkInsert } from '../postings-sql.js';
import { median } from '../stats.js';
import type { PostingsUpkeep, ScenarioContext } from './types.js';
import { INGEST_NAMESPACE } from './types.js';

const FLOOR_NAMESPACE = 'bench-ingest-floor';

const OBSERVATION_COLUMNS = [
  'observation_id',
  'source_system',
  'source_stream',
  'source_external_id',
  'kind',
  'occurred_at',
  'recorded_at',
  'actor_type',
  'actor_id',
  'subject_type',
  'subject_id',
  'scopes',
  'visibility',
  'content',
  'data',
  'provenance',
  'status',
  'status_reason',
  'session_id',
  'pii',
  'pii_categories',
];
const ENTITY_COLUMNS = [
  'key',
  'kind',
  'title',
  'scopes',
  'visibility',
  'source_path',
  'provenance',
  'last_seen',
];
const CHUNK_COLUMNS = [
  'node_key',
  'ord',
  'kind',
  'title',
  'heading',
  'text',
  'search_text',
  'own_search_text',
  'ts_config',
  'source_path',
  'meta',
  'scopes',
  'visibility',
  'observation_id',
  'occurred_at',
  'pii',
  'pii_categories',
  'embedding',
];
const MENTION_COLUMNS = ['entity_key', 'observation_id', 'role', 'evidence'];
/** Casts where a text parameter does not coerce by itself. */
const CASTS: Record<string, string> = {
  scopes: 'text[]',
  visibility: 'text[]',
  pii_categories: 'text[]',
  data: 'jsonb',
  provenance: 'jsonb',
  meta: 'jsonb',
  embedding: 'vector',
  ts_config: 'regconfig',
  occurred_at: 'timestamptz',
  recorded_at: 'timestamptz',
  last_seen: 'timestamptz',
  pii: 'boolean',
  ord: 'int',
};

type Row = Record<string, unknown>;

/** The same vector with its first component scaled by 1 + 1e-4: as costly to index, but not a duplicate. */
export function unseenVector(text: string): string {
  const inner = text.slice(1, -1).trim();
  const components = inner === '' ? [] : inner.split(',').map(Number);
  if (components.length === 0 || components.some(Number.isNaN)) return text;
  components[0] = components[0]! * (1 + 1e-4) + 1e-6;
  return `[${components.join(',')}]`;
}

function values(rows: readonly Row[], columns: readonly string[], params: unknown[]): string {
  return rows
    .map((row) => {
      const cells = columns.map((c) => {
        const v = row[c];
        params.push(
          v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date)
            ? JSON.stringify(v)
            : v,
        );
        return `$${params.length}${CASTS[c] ? `::${CASTS[c]}` : ''}`;
      });
      return `($1, ${cells.join(', ')})`;
    })
    .join(',\n');
}

/** The milliseconds the hand-written insert of batch `b`'s rows takes (`prefix` selects them by external id). */
export async function observationFloorMs(ctx: ScenarioContext, prefix: string): Promise<number> {
  const q = ctx.gateway;
  const observations = await q.query<Row>(
    `/* benchFloorObservations */ SELECT ${OBSERVATION_COLUMNS.join(', ')} FROM observations
     WHERE namespace = $1 AND source_external_id LIKE $2`,
    [INGEST_NAMESPACE, `${prefix}%`],
  );
  const ids = observations.map((o) => o.observation_id);
  const entities = await q.query<Row>(
    `/* benchFloorEntities */ SELECT ${ENTITY_COLUMNS.join(', ')} FROM entities WHERE namespace = $1 AND key = ANY($2::text[])`,
    [INGEST_NAMESPACE, ids],
  );
  const chunks = await q.query<Row>(
    `/* benchFloorChunks */ SELECT ${CHUNK_COLUMNS.map((c) => (c === 'embedding' || c === 'ts_config' ? `${c}::text` : c)).join(', ')}
     FROM chunks WHERE namespace = $1 AND observation_id = ANY($2::text[])`,
    [INGEST_NAMESPACE, ids],
  );
  const mentions = await q.query<Row>(
    `/* benchFloorMentions */ SELECT ${MENTION_COLUMNS.join(', ')} FROM mentions WHERE namespace = $1 AND observation_id = ANY($2::text[])`,
    [INGEST_NAMESPACE, ids],
  );
  if (observations.length === 0 || entities.length === 0 || chunks.length === 0) return Number.NaN;
  for (const chunk of chunks) {
    if (typeof chunk.embedding === 'string') chunk.embedding = unseenVector(chunk.embedding);
  }
  const params: unknown[] = [FLOOR_NAMESPACE];
  const insert = (table: string, rows: readonly Row[], columns: readonly string[]) =>
    `INSERT INTO ${table} (namespace, ${columns.join(', ')}) VALUES ${values(rows, columns, params)}`;
  const ctes = [
    `o AS (${insert('observations', observations, OBSERVATION_COLUMNS)})`,
    `e AS (${insert('entities', entities, ENTITY_COLUMNS)})`,
    ...(mentions.length > 0 ? [`m AS (${insert('mentions', mentions, MENTION_COLUMNS)})`] : []),
  ];
  const text = `/* benchWriteFloor */
    WITH ${ctes.join(',\n         ')},
         ${postedChunkInsert('c', insert('chunks', chunks, CHUNK_COLUMNS))}
    SELECT count(*) FROM c`;
  // One statement binds at most 65,535 parameters: a batch too large for it has no floor.
  if (params.length > 65_535) return Number.NaN;
  const started = performance.now();
  await q.query(text, params);
  return performance.now() - started;
}

const POSTINGS_NAMESPACE = 'bench-postings-upkeep';
/** Rounds of the two inserts, which go first alternating from round to round; medians are kept. */
const POSTINGS_ROUNDS = 3;
/** The staged chunk columns: the floor's, without the vector (see postingsUpkeep). */
const STAGED_COLUMNS = CHUNK_COLUMNS.filter((c) => c !== 'embedding').join(', ');

/**
 * What the BM25 postings add to a chunk insert: batch `prefix`'s chunks, staged once in a table
 * of their own, inserted into a namespace of their own with and without the postings CTEs, each
 * inside a transaction that is rolled back (so every round inserts into the same tables).
 * Without their vectors: the HNSW insert, the costliest part of a chunk and the noisiest, is
 * the same on both sides and would only blur the difference. Null when the batch wrote none.
 */
export async function postingsUpkeep(ctx: ScenarioContext, prefix: string): Promise<PostingsUpkeep | null> {
  const q = ctx.gateway;
  await q.query(`/* benchPostingsStageTable */ CREATE TABLE IF NOT EXISTS bench_postings_stage AS
    SELECT ${STAGED_COLUMNS} FROM chunks WITH NO DATA`);
  await q.query('/* benchPostingsStageEmpty */ TRUNCATE bench_postings_stage');
  const [staged] = await q.query<{ n: number }>(
    `/* benchPostingsStage */ WITH s AS (
       INSERT INTO bench_postings_stage
       SELECT ${CHUNK_COLUMNS.filter((c) => c !== 'embedding')
         .map((c) => `c.${c}`)
         .join(', ')}
       FROM chunks c JOIN observations o ON o.namespace = c.namespace AND o.observation_id = c.observation_id
       WHERE c.namespace = $1 AND o.source_external_id LIKE $2
       RETURNING 1
     ) SELECT count(*)::int AS n FROM s`,
    [INGEST_NAMESPACE, `${prefix}%`],
  );
  const chunks = staged?.n ?? 0;
  if (chunks === 0) return null;
  const insert = `INSERT INTO chunks (namespace, ${STAGED_COLUMNS}) SELECT $1, ${STAGED_COLUMNS} FROM bench_postings_stage`;
  const variants = {
    with: `/* benchPostingsWith */ WITH ${postedChunkInsert('written', insert)} SELECT count(*) FROM written`,
    without: `/* benchPostingsWithout */ ${insert}`,
  };
  const times = { with: [] as number[], without: [] as number[] };
  for (let round = 0; round < POSTINGS_ROUNDS; round++) {
    const order = round % 2 === 0 ? (['with', 'without'] as const) : (['without', 'with'] as const);
    for (const variant of order)
      times[variant].push(await q.rolledBack(variants[variant], [POSTINGS_NAMESPACE]));
  }
  return { chunks, withMs: median(times.with), withoutMs: median(times.without) };
}
