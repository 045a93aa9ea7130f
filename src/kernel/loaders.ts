import DataLoader from 'dataloader';
import type { Database } from '../db/database.js';
import { type ChunkRow, findChunksByIds } from './store/chunk-store.js';
import { type EntityRow, findEntitiesByKeys } from './store/entity-store.js';
import { type FactRow, findFactsByIds } from './store/fact-store.js';
import * as graph from './store/graph-store.js';
import { type ObservationRow, findObservationsByIds } from './store/observation-store.js';

/** A key that carries its namespace: batches group by namespace, one statement per group. */
export const nsKey = (namespace: string, key: string): string => `${namespace}\u0000${key}`;

export function splitNsKey(k: string): [string, string] {
  const i = k.indexOf('\u0000');
  return [k.slice(0, i), k.slice(i + 1)];
}

/** Runs `load(namespace, keys)` once per namespace present in the batch and restores key order. */
export function byNamespace<V>(
  load: (namespace: string, keys: string[]) => Promise<(V | null)[]>,
): (keys: readonly string[]) => Promise<(V | null)[]> {
  return async (nsKeys) => {
    const groups = new Map<string, string[]>();
    for (const k of nsKeys) {
      const [ns, key] = splitNsKey(k);
      const list = groups.get(ns) ?? [];
      list.push(key);
      groups.set(ns, list);
    }
    const found = new Map<string, V | null>();
    await Promise.all(
      [...groups].map(async ([ns, keys]) => {
        const unique = [...new Set(keys)];
        const values = await load(ns, unique);
        for (const [i, k] of unique.entries()) found.set(nsKey(ns, k), values[i] ?? null);
      }),
    );
    return nsKeys.map((k) => found.get(k) ?? null);
  };
}

export interface Loaders {
  entity: DataLoader<string, EntityRow | null>;
  fact: DataLoader<string, FactRow | null>;
  observation: DataLoader<string, ObservationRow | null>;
  chunk: DataLoader<string, ChunkRow | null>;
  /** Relations of the graph (facts of an entity, neighbours, evidence…), see GraphLoaders. */
  graph: GraphLoaders;
}

/** Fresh loaders per request: caches never outlive one request or cross principals. */
export function createLoaders(db: Database, visibleScopes: string[] | null): Loaders {
  const base = {
    entity: new DataLoader(byNamespace((ns, keys) => findEntitiesByKeys(db, ns, keys, visibleScopes))),
    fact: new DataLoader(byNamespace((ns, ids) => findFactsByIds(db, ns, ids, visibleScopes))),
    observation: new DataLoader(byNamespace((ns, ids) => findObservationsByIds(db, ns, ids, visibleScopes))),
    chunk: new DataLoader(byNamespace((ns, ids) => findChunksByIds(db, ns, ids.map(Number), visibleScopes))),
  };
  return { ...base, graph: createGraphLoaders(db, visibleScopes, base) };
}

// ------------------------------------------------------------------ graph relations

/**
 * Loaders of relations that take arguments. Each argument set gets its own DataLoader (a Map
 * per relation, keyed by the arguments' stable JSON), keyed by the parent's `nsKey`: the 50
 * entities of a list asking `facts(first: 5)` share one loader and cost one statement.
 * Rows they return prime the by-id loaders, so resolving a listed fact again costs nothing.
 */
export interface GraphLoaders {
  entityFacts(q: graph.EntityFactsQuery): DataLoader<string, graph.Cursored<FactRow>[]>;
  entityFactCount(
    q: Pick<graph.EntityFactsQuery, 'asOf' | 'predicates' | 'direction' | 'includeHistory'>,
  ): DataLoader<string, number>;
  neighbors(q: graph.NeighborQuery): DataLoader<string, graph.NeighborHit[]>;
  attributesAt(asOf: Date): DataLoader<string, graph.AttributeVersionRow | null>;
  entityChunks(q: graph.OrdPageQuery): DataLoader<string, ChunkRow[]>;
  entityChunkCount: DataLoader<string, number>;
  entityObservations(q: graph.TimePageQuery): DataLoader<string, graph.ObservationPageRow[]>;
  entityObservationCount: DataLoader<string, number>;
  observationFacts: DataLoader<string, FactRow[]>;
  observationEpisodeKeys: DataLoader<string, string[]>;
  entitySources: DataLoader<string, graph.EntitySourceRow | null>;
}

/** Facts and episodes listed per observation: an observation holds at most 200 assertions. */
export const OBSERVATION_RELATION_LIMIT = 200;
/** Evidence listed per entity in a provenance walk. */
export const ENTITY_EVIDENCE_LIMIT = 20;

type BaseLoaders = Omit<Loaders, 'graph'>;

function createGraphLoaders(db: Database, visibleScopes: string[] | null, base: BaseLoaders): GraphLoaders {
  const primeFacts = (ns: string, rows: FactRow[]) => {
    for (const r of rows) base.fact.prime(nsKey(ns, r.factId), r);
  };
  return {
    entityFacts: perArgs((q) =>
      listLoader(async (ns, keys) => {
        const found = await graph.factsOfEntities(db, ns, keys, q, visibleScopes);
        for (const rows of found.values()) primeFacts(ns, rows);
        return found;
      }),
    ),
    entityFactCount: perArgs((q) =>
      valueLoader((ns, keys) => graph.countFactsOfEntities(db, ns, keys, q, visibleScopes), 0),
    ),
    neighbors: perArgs((q) =>
      listLoader((ns, keys) => graph.neighborsOfEntities(db, ns, keys, q, visibleScopes)),
    ),
    attributesAt: perArgs((asOf) =>
      valueLoader((ns, keys) => graph.attributeVersionsAt(db, ns, keys, asOf, visibleScopes), null),
    ),
    entityChunks: perArgs((q) =>
      listLoader(async (ns, keys) => {
        const found = await graph.chunksOfEntities(db, ns, keys, q, visibleScopes);
        for (const rows of found.values())
          for (const r of rows) base.chunk.prime(nsKey(ns, String(r.chunkId)), r);
        return found;
      }),
    ),
    entityChunkCount: valueLoader((ns, keys) => graph.countChunksOfEntities(db, ns, keys, visibleScopes), 0),
    entityObservations: perArgs((q) =>
      listLoader(async (ns, keys) => {
        const found = await graph.observationsOfEntities(db, ns, keys, q, visibleScopes);
        for (const rows of found.values())
          for (const r of rows) base.observation.prime(nsKey(ns, r.observationId), r);
        return found;
      }),
    ),
    entityObservationCount: valueLoader(
      (ns, keys) => graph.countObservationsOfEntities(db, ns, keys, visibleScopes),
      0,
    ),
    observationFacts: listLoader(async (ns, ids) => {
      const found = await graph.factsOfObservations(db, ns, ids, OBSERVATION_RELATION_LIMIT, visibleScopes);
      for (const rows of found.values()) primeFacts(ns, rows);
      return found;
    }),
    observationEpisodeKeys: listLoader((ns, ids) =>
      graph.episodeKeysOfObservations(db, ns, ids, OBSERVATION_RELATION_LIMIT, visibleScopes),
    ),
    entitySources: valueLoader(
      (ns, keys) => graph.entitySources(db, ns, keys, ENTITY_EVIDENCE_LIMIT, visibleScopes),
      null,
    ),
  };
}

/** A loader of lists: one statement per namespace in the batch, `[]` for parents with none. */
function listLoader<V>(
  load: (namespace: string, keys: string[]) => Promise<Map<string, V[]>>,
): DataLoader<string, V[]> {
  return new DataLoader(async (nsKeys) => {
    const values = await byNamespace(async (ns, keys) => {
      const found = await load(ns, keys);
      return keys.map((k) => found.get(k) ?? []);
    })(nsKeys);
    return values.map((v) => v ?? []);
  });
}

/** A loader of one value per parent, `fallback` where the statement returned none. */
function valueLoader<V, F extends V | null>(
  load: (namespace: string, keys: string[]) => Promise<Map<string, V>>,
  fallback: F,
): DataLoader<string, V | F> {
  return new DataLoader(async (nsKeys) => {
    const values = await byNamespace(async (ns, keys) => {
      const found = await load(ns, keys);
      return keys.map((k) => (found.has(k) ? (found.get(k) as V) : fallback));
    })(nsKeys);
    return values.map((v) => (v === null ? fallback : v));
  });
}

/** One loader per distinct argument set, created on first use within the request. */
function perArgs<A, L>(make: (args: A) => L): (args: A) => L {
  const made = new Map<string, L>();
  return (args) => {
    const key = stableJson(args);
    let loader = made.get(key);
    if (!loader) {
      loader = make(args);
      made.set(key, loader);
    }
    return loader;
  };
}

/** JSON with object keys sorted (dates as ISO strings): equal arguments give equal keys. */
export function stableJson(value: unknown): string {
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}
