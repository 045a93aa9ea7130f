import type { Database } from '../db/database.js';
import { indexObservationContext, namespacesWithObservations } from '../store/context-index-store.js';
import { linkObservationEntities } from '../store/entity-link-store.js';

/**
 * Rebuilds the contextual index (each short turn indexed with its neighbours' text, see
 * store/context-index-store.ts) and the entity links (store/entity-link-store.ts) of every
 * namespace, or of the given ones: what `memgate reindex` runs for data written before they
 * existed, after a window change, or after entities were added. One transaction and two
 * statements per namespace; re-running changes nothing.
 */
export async function reindexContext(
  db: Database,
  namespaces: readonly string[] | null = null,
  log: (message: string) => void = () => undefined,
): Promise<{ namespaces: number; chunks: number; links: number }> {
  const targets = namespaces ?? (await namespacesWithObservations(db));
  let chunks = 0;
  let links = 0;
  for (const ns of targets) {
    const [changed, linked] = await db.transaction('reindexContext', async (tx) => [
      await indexObservationContext(tx, ns, null),
      await linkObservationEntities(tx, ns, null),
    ]);
    if (changed + linked > 0)
      log(`${ns}: ${changed} chunks indexed with their neighbouring turns, ${linked} entity links`);
    chunks += changed;
    links += linked;
  }
  return { namespaces: targets.length, chunks, links };
}
