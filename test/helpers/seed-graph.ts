import type { Queryable } from '../../src/db/database.js';
import { factId, observationId } from '../../src/domain/ids.js';
import { insertChunks } from './postings.js';

/**
 * Direct SQL seeding of graph rows for read tests: exact control over statuses, intervals,
 * visibility and evidence without going through the write mutations. Multi-row statements.
 */

export interface SeedEntity {
  key: string;
  kind?: string;
  title?: string;
  attributes?: Record<string, unknown>;
  visibility?: string[];
  provenance?: Record<string, unknown> | null;
  content?: string | null;
}

export async function seedEntities(db: Queryable, namespace: string, entities: SeedEntity[]): Promise<void> {
  if (entities.length === 0) return;
  await db.query(
    `/* seedEntities */
     INSERT INTO entities (namespace, key, kind, title, attributes, visibility, scopes, provenance, content)
     SELECT $1, e.key, e.kind, e.title, e.attributes, e.visibility, e.visibility, e.provenance, e.content
     FROM jsonb_to_recordset($2::jsonb) AS e(key text, kind text, title text, attributes jsonb, visibility text[],
                                             provenance jsonb, content text)`,
    [
      namespace,
      JSON.stringify(
        entities.map((e) => ({
          key: e.key,
          kind: e.kind ?? 'thing',
          title: e.title ?? e.key,
          attributes: e.attributes ?? {},
          visibility: e.visibility ?? [],
          provenance: e.provenance ?? null,
          content: e.content ?? null,
        })),
      ),
    ],
  );
}

export interface SeedVersion {
  key: string;
  validFrom: Date;
  validTo?: Date | null;
  title?: string;
  attributes: Record<string, unknown>;
  observationId?: string | null;
}

export async function seedVersions(db: Queryable, namespace: string, versions: SeedVersion[]): Promise<void> {
  await db.query(
    `/* seedVersions */
     INSERT INTO entity_versions (namespace, key, valid_from, valid_to, title, attributes, observation_id)
     SELECT $1, v.key, v.valid_from, v.valid_to, v.title, v.attributes, v.observation_id
     FROM jsonb_to_recordset($2::jsonb) AS v(key text, valid_from timestamptz, valid_to timestamptz, title text,
                                             attributes jsonb, observation_id text)`,
    [
      namespace,
      JSON.stringify(
        versions.map((v) => ({
          key: v.key,
          valid_from: v.validFrom.toISOString(),
          valid_to: v.validTo?.toISOString() ?? null,
          title: v.title ?? v.key,
          attributes: v.attributes,
          observation_id: v.observationId ?? null,
        })),
      ),
    ],
  );
}

export interface SeedFact {
  subject: string;
  predicate: string;
  object: string;
  validFrom: Date;
  validTo?: Date | null;
  status?: 'ACTIVE' | 'SUPERSEDED' | 'RETRACTED' | 'EVIDENCE_LOST';
  observationIds?: string[];
  visibility?: string[];
  confidence?: number;
  supersedes?: string | null;
  supersededBy?: string | null;
}

/** Inserts facts with their contract ids; returns the ids in input order. */
export async function seedFacts(db: Queryable, namespace: string, facts: SeedFact[]): Promise<string[]> {
  const ids = facts.map((f) => factId(namespace, f.subject, f.predicate, f.object, f.validFrom));
  await db.query(
    `/* seedFacts */
     INSERT INTO facts (namespace, fact_id, subject, predicate, object, valid_from, valid_to, evidence, confidence,
                        status, observation_ids, visibility, scopes, supersedes, superseded_by)
     SELECT $1, f.fact_id, f.subject, f.predicate, f.object, f.valid_from, f.valid_to, 'ASSERTED', f.confidence,
            f.status, f.observation_ids, f.visibility, f.visibility, f.supersedes, f.superseded_by
     FROM jsonb_to_recordset($2::jsonb) AS f(fact_id text, subject text, predicate text, object text,
            valid_from timestamptz, valid_to timestamptz, confidence real, status text, observation_ids text[],
            visibility text[], supersedes text, superseded_by text)`,
    [
      namespace,
      JSON.stringify(
        facts.map((f, i) => ({
          fact_id: ids[i],
          subject: f.subject,
          predicate: f.predicate,
          object: f.object,
          valid_from: f.validFrom.toISOString(),
          valid_to: f.validTo?.toISOString() ?? null,
          confidence: f.confidence ?? 1,
          status: f.status ?? 'ACTIVE',
          observation_ids: f.observationIds ?? [],
          visibility: f.visibility ?? [],
          supersedes: f.supersedes ?? null,
          superseded_by: f.supersededBy ?? null,
        })),
      ),
    ],
  );
  return ids;
}

export interface SeedObservation {
  system: string;
  stream?: string | null;
  externalId: string;
  kind?: string;
  occurredAt: Date;
  content?: string | null;
  provenance?: Record<string, unknown> | null;
  visibility?: string[];
  /** Entity keys it mentions, with a role (default `mention`). */
  mentions?: (string | { key: string; role: string })[];
}

/** Inserts observations (ids as the contract computes them) and their mentions; returns the ids. */
export async function seedObservations(
  db: Queryable,
  namespace: string,
  observations: SeedObservation[],
): Promise<string[]> {
  const ids = observations.map((o) =>
    observationId(
      namespace,
      { system: o.system, stream: o.stream ?? null, externalId: o.externalId },
      { kind: o.kind ?? 'note', occurredAt: o.occurredAt },
    ),
  );
  await db.query(
    `/* seedObservations */
     INSERT INTO observations (namespace, observation_id, source_system, source_stream, source_external_id, kind,
                               occurred_at, content, provenance, visibility, scopes, status)
     SELECT $1, o.id, o.system, o.stream, o.external_id, o.kind, o.occurred_at, o.content, o.provenance,
            o.visibility, o.visibility, 'PROCESSED'
     FROM jsonb_to_recordset($2::jsonb) AS o(id text, system text, stream text, external_id text, kind text,
            occurred_at timestamptz, content text, provenance jsonb, visibility text[])`,
    [
      namespace,
      JSON.stringify(
        observations.map((o, i) => ({
          id: ids[i],
          system: o.system,
          stream: o.stream ?? null,
          external_id: o.externalId,
          kind: o.kind ?? 'note',
          occurred_at: o.occurredAt.toISOString(),
          content: o.content ?? null,
          provenance: o.provenance ?? null,
          visibility: o.visibility ?? [],
        })),
      ),
    ],
  );
  const mentions = observations.flatMap((o, i) =>
    (o.mentions ?? []).map((m) =>
      typeof m === 'string'
        ? { entity_key: m, observation_id: ids[i], role: 'mention' }
        : { entity_key: m.key, observation_id: ids[i], role: m.role },
    ),
  );
  if (mentions.length) {
    await db.query(
      `/* seedMentions */
       INSERT INTO mentions (namespace, entity_key, observation_id, role)
       SELECT $1, m.entity_key, m.observation_id, m.role
       FROM jsonb_to_recordset($2::jsonb) AS m(entity_key text, observation_id text, role text)`,
      [namespace, JSON.stringify(mentions)],
    );
  }
  return ids;
}

export interface SeedChunk {
  nodeKey: string;
  order: number;
  text: string;
  title?: string | null;
  heading?: string | null;
  observationId?: string | null;
  visibility?: string[];
}

/** Inserts chunks (no embeddings) with their postings; returns their chunk ids in input order. */
export async function seedChunks(db: Queryable, namespace: string, chunks: SeedChunk[]): Promise<number[]> {
  const rows = await insertChunks(
    db,
    `INSERT INTO chunks (namespace, node_key, ord, kind, title, heading, text, search_text, observation_id,
                         visibility, scopes)
     SELECT $1, c.node_key, c.ord, 'document', c.title, c.heading, c.text, c.text, c.observation_id,
            c.visibility, c.visibility
     FROM jsonb_to_recordset($2::jsonb) AS c(node_key text, ord int, title text, heading text, text text,
            observation_id text, visibility text[])`,
    [
      namespace,
      JSON.stringify(
        chunks.map((c) => ({
          node_key: c.nodeKey,
          ord: c.order,
          title: c.title ?? null,
          heading: c.heading ?? null,
          text: c.text,
          observation_id: c.observationId ?? null,
          visibility: c.visibility ?? [],
        })),
      ),
    ],
  );
  const byKey = new Map(rows.map((r) => [`${r.nodeKey}#${r.ord}`, r.chunkId]));
  return chunks.map((c) => byKey.get(`${c.nodeKey}#${c.order}`)!);
}

export const at = (iso: string) => new Date(iso);
