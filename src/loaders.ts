import DataLoader from 'dataloader';
import type { Database } from './db/database.js';
import { type ChunkRow, findChunksByIds } from './store/chunk-store.js';
import { type EntityRow, findEntitiesByKeys } from './store/entity-store.js';
import { type FactRow, findFactsByIds } from './store/fact-store.js';
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
}

/** Fresh loaders per request: caches never outlive one request or cross principals. */
export function createLoaders(db: Database, visibleScopes: string[] | null): Loaders {
  return {
    entity: new DataLoader(byNamespace((ns, keys) => findEntitiesByKeys(db, ns, keys, visibleScopes))),
    fact: new DataLoader(byNamespace((ns, ids) => findFactsByIds(db, ns, ids, visibleScopes))),
    observation: new DataLoader(byNamespace((ns, ids) => findObservationsByIds(db, ns, ids, visibleScopes))),
    chunk: new DataLoader(byNamespace((ns, ids) => findChunksByIds(db, ns, ids.map(Number), visibleScopes))),
  };
}
