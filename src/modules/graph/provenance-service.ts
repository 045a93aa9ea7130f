import { assertCanRead } from '../../auth/principal.js';
import { notFound } from '../../errors.js';
import { globalId, parseNodeId } from '../../global-id.js';
import { ENTITY_EVIDENCE_LIMIT, nsKey } from '../../kernel/loaders.js';
import type { ChunkRow } from '../../kernel/store/chunk-store.js';
import { SUMMARY_KIND, summarySourcesOf } from '../summaries/index.js';
import type { EntityRow } from '../../kernel/store/entity-store.js';
import type { FactRow } from '../../kernel/store/fact-store.js';
import type { ObservationRow } from '../../kernel/store/observation-store.js';
import type { RequestScope } from '../../kernel/request-scope.js';

export type ProvenanceKind = 'fact' | 'chunk' | 'entity' | 'observation' | 'source';

/** One step of a walk; `depth` 0 is the item asked about, its evidence one level deeper. */
export interface ProvenanceStep {
  kind: ProvenanceKind;
  /** Relay global id of the step's node (none for a source). */
  id: string | null;
  label: string;
  uri: string | null;
  depth: number;
  source: { system: string; stream: string | null; externalId: string | null } | null;
  /** The caller's provenance metadata (observation.provenance, or a document's). */
  metadata: unknown;
  at: Date | null;
}

export interface Provenance {
  steps: ProvenanceStep[];
  /** True when some evidence was left out (more than the per-item limit). */
  truncated: boolean;
}

/** Observations listed per fact or entity in one walk. */
export const PROVENANCE_EVIDENCE_LIMIT = ENTITY_EVIDENCE_LIMIT;

/** What a walk can start from: the node types that rest on evidence. */
export type ProvenanceTarget =
  | { typename: 'Fact'; namespace: string; key: string }
  | { typename: 'Chunk'; namespace: string; key: string }
  | { typename: 'Entity'; namespace: string; key: string }
  | { typename: 'Observation'; namespace: string; key: string };

/**
 * Walks from an item down to the events it rests on: Fact → its observations; Chunk → the
 * observation its text came from (or its owner entity); Entity → its document source and its
 * evidence; Observation → its source identity and URI. Every hop goes through the request's
 * loaders, so walks started together (a ContextPack's items) batch into a few statements.
 */
export class ProvenanceService {
  constructor(private readonly scope: RequestScope) {}

  /** From a Relay global id of a Fact, Chunk, Entity or Observation. */
  async provenance(id: string): Promise<Provenance> {
    const parsed = parseNodeId(id);
    const target = {
      typename: parsed.typename,
      namespace: parsed.namespace,
      key: parsed.key,
    } as ProvenanceTarget;
    const walk = await this.walk(target);
    if (!walk) throw notFound(`No ${target.typename.toLowerCase()} with id "${id.slice(0, 80)}" is visible.`);
    return walk;
  }

  /** The walk from one item; null when it does not exist or is not visible. */
  async walk(target: ProvenanceTarget): Promise<Provenance | null> {
    assertCanRead(this.scope.principal, target.namespace);
    const out: Provenance = { steps: [], truncated: false };
    const ns = target.namespace;
    const l = this.scope.loaders;
    switch (target.typename) {
      case 'Fact': {
        const fact = await l.fact.load(nsKey(ns, target.key));
        if (!fact) return null;
        await this.fromFact(fact, 0, out);
        return out;
      }
      case 'Chunk': {
        const chunk = /^\d+$/.test(target.key) ? await l.chunk.load(nsKey(ns, target.key)) : null;
        if (!chunk) return null;
        await this.fromChunk(chunk, 0, out);
        return out;
      }
      case 'Entity': {
        const entity = await l.entity.load(nsKey(ns, target.key));
        if (!entity) return null;
        await this.fromEntity(entity, 0, out);
        return out;
      }
      case 'Observation': {
        const observation = await l.observation.load(nsKey(ns, target.key));
        if (!observation) return null;
        fromObservation(observation, 0, out);
        return out;
      }
    }
  }

  private async fromFact(fact: FactRow, depth: number, out: Provenance) {
    const until = fact.validTo ? fact.validTo.toISOString() : '…';
    out.steps.push({
      ...blank(depth),
      kind: 'fact',
      id: globalId('Fact', fact.namespace, fact.factId),
      label: `${fact.subject} —${fact.predicate}→ ${fact.object} [${fact.validFrom.toISOString()}, ${until}) ${fact.status} ${fact.evidence}`,
      uri: memgateUri(fact.namespace, 'fact', fact.factId),
      at: fact.validFrom,
    });
    await this.observationsOf(fact.namespace, fact.observationIds, depth + 1, out);
  }

  private async fromChunk(chunk: ChunkRow, depth: number, out: Provenance) {
    if (chunk.kind === SUMMARY_KIND) return this.fromSummary(chunk, depth, out);
    out.steps.push({
      ...blank(depth),
      kind: 'chunk',
      id: globalId('Chunk', chunk.namespace, Number(chunk.chunkId)),
      label: [chunk.title ?? chunk.nodeKey, chunk.heading, `#${chunk.order}`].filter(Boolean).join(' › '),
      uri: `${memgateUri(chunk.namespace, 'source', chunk.nodeKey)}#chunk-${chunk.order}`,
      at: chunk.occurredAt,
    });
    const l = this.scope.loaders;
    if (chunk.observationId) {
      const observation = await l.observation.load(nsKey(chunk.namespace, chunk.observationId));
      if (observation) {
        fromObservation(observation, depth + 1, out);
        return;
      }
    }
    const owner = await l.entity.load(nsKey(chunk.namespace, chunk.nodeKey));
    if (owner) await this.fromEntity(owner, depth + 1, out);
  }

  /** A summary (DERIVED) → the facts it states → their observations, and the notes it quotes. */
  private async fromSummary(chunk: ChunkRow, depth: number, out: Provenance) {
    out.steps.push({
      ...blank(depth),
      kind: 'chunk',
      id: globalId('Chunk', chunk.namespace, Number(chunk.chunkId)),
      label: `summary of ${chunk.title ?? chunk.nodeKey} (DERIVED)`,
      uri: `${memgateUri(chunk.namespace, 'entity', chunk.nodeKey)}#summary`,
      at: chunk.occurredAt,
    });
    const sources = summarySourcesOf(chunk.meta);
    const l = this.scope.loaders;
    const facts = await l.fact.loadMany(sources.facts.map((id) => nsKey(chunk.namespace, id)));
    for (const fact of facts) if (fact && !(fact instanceof Error)) await this.fromFact(fact, depth + 1, out);
    await this.observationsOf(chunk.namespace, sources.observations, depth + 1, out);
  }

  private async fromEntity(entity: EntityRow, depth: number, out: Provenance) {
    out.steps.push({
      ...blank(depth),
      kind: 'entity',
      id: globalId('Entity', entity.namespace, entity.key),
      label: `${entity.kind} ${entity.key}${entity.title && entity.title !== entity.key ? ` (${entity.title})` : ''}`,
      uri: memgateUri(entity.namespace, 'entity', entity.key),
      at: entity.lastSeen,
    });
    const sources = await this.scope.loaders.graph.entitySources.load(nsKey(entity.namespace, entity.key));
    if (!sources) return;
    const meta = sources.provenance;
    if (sources.hasContent || (meta && Object.keys(meta).length > 0)) {
      const uri =
        typeof meta?.uri === 'string' ? meta.uri : memgateUri(entity.namespace, 'source', entity.key);
      out.steps.push({
        ...blank(depth + 1),
        kind: 'source',
        label: documentLabel(entity, meta),
        uri,
        metadata: meta ?? null,
      });
    }
    if (sources.observationIds.length >= ENTITY_EVIDENCE_LIMIT) out.truncated = true;
    await this.observationsOf(entity.namespace, sources.observationIds, depth + 1, out);
  }

  private async observationsOf(namespace: string, ids: readonly string[], depth: number, out: Provenance) {
    if (ids.length > PROVENANCE_EVIDENCE_LIMIT) out.truncated = true;
    const loaded = await this.scope.loaders.observation.loadMany(
      ids.slice(0, PROVENANCE_EVIDENCE_LIMIT).map((id) => nsKey(namespace, id)),
    );
    for (const o of loaded) if (o && !(o instanceof Error)) fromObservation(o, depth, out);
  }
}

function fromObservation(o: ObservationRow, depth: number, out: Provenance) {
  const source = { system: o.sourceSystem, stream: o.sourceStream, externalId: o.sourceExternalId };
  const own = memgateUri(o.namespace, 'observation', o.observationId);
  const given = callerUri(o.provenance);
  out.steps.push({
    ...blank(depth),
    kind: 'observation',
    id: globalId('Observation', o.namespace, o.observationId),
    label: `${o.kind} at ${o.occurredAt.toISOString()}${o.status === 'REDACTED' ? ' (redacted)' : ''}`,
    uri: own,
    source,
    at: o.occurredAt,
  });
  out.steps.push({
    ...blank(depth + 1),
    kind: 'source',
    label: sourceLabel(source),
    uri: given ?? own,
    source,
    metadata: o.provenance ?? null,
    at: o.occurredAt,
  });
}

function blank(depth: number): ProvenanceStep {
  return { kind: 'source', id: null, label: '', uri: null, depth, source: null, metadata: null, at: null };
}

/** `memgate://<namespace>/<what>/<id>`, each part percent-encoded. */
export function memgateUri(namespace: string, what: string, id: string): string {
  return `memgate://${encodeURIComponent(namespace)}/${what}/${encodeURIComponent(id)}`;
}

function callerUri(provenance: unknown): string | null {
  if (provenance && typeof provenance === 'object' && !Array.isArray(provenance)) {
    const uri = (provenance as { uri?: unknown }).uri;
    if (typeof uri === 'string' && uri.length > 0) return uri;
  }
  return null;
}

function sourceLabel(s: { system: string; stream: string | null; externalId: string | null }): string {
  return `${s.system}${s.stream ? `/${s.stream}` : ''}${s.externalId ? `#${s.externalId}` : ''}`;
}

function documentLabel(entity: EntityRow, meta: Record<string, unknown> | null): string {
  const parts = ['repository', 'path', 'commit', 'commit_sha']
    .map((k) => meta?.[k])
    .filter((v): v is string => typeof v === 'string' && v.length > 0);
  return parts.length ? `document ${entity.key}: ${parts.join(' ')}` : `document ${entity.key}`;
}
