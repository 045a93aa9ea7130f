import type { Database } from '../../db/database.js';
import { z } from 'zod';
import { assertCanWrite } from '../../auth/principal.js';
import { forbidden, parseInput } from '../../errors.js';
import {
  type ContextWindow,
  DEFAULT_CONTEXT_WINDOW,
  MAX_CONTEXT_WINDOW,
  findContextWindow,
  indexObservationContext,
  namespacesWithObservations,
  saveContextWindow,
} from '../../kernel/store/context-index-store.js';
import { linkObservationEntities } from '../../kernel/store/entity-link-store.js';
import type { RequestScope } from '../../kernel/request-scope.js';
import { namespaceSchema } from '../../kernel/validation.js';

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

const windowSchema = z.object({
  previous: z.number().int().min(0).max(MAX_CONTEXT_WINDOW).nullish(),
  next: z.number().int().min(0).max(MAX_CONTEXT_WINDOW).nullish(),
});

export interface ContextWindowSetting extends ContextWindow {
  namespace: string;
  /** Chunks whose index changed with the new window. */
  reindexedChunks: number;
}

/**
 * configureContextWindow: sets how many previous and next turns a namespace's short turns are
 * indexed with (both null = the default) and rebuilds the namespace's contextual index in the
 * same transaction, so search never mixes two windows. That touches every chunk of the
 * namespace, so it takes an admin or a principal that sees every scope (as setTextSearch).
 */
export class ContextIndexService {
  constructor(private readonly scope: RequestScope) {}

  async configure(namespace: string, previous: unknown, next: unknown): Promise<ContextWindowSetting> {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    const { principal } = this.scope;
    assertCanWrite(principal, ns);
    // One window per namespace, so the re-index touches every chunk, hidden ones included.
    if (!principal.admin && principal.scopes !== null) {
      throw forbidden(
        'Changing the context window of a namespace re-indexes every chunk; it needs an admin principal.',
      );
    }
    const w = parseInput(windowSchema, { previous, next }, 'window');
    const fallback = DEFAULT_CONTEXT_WINDOW;
    const window =
      w.previous == null && w.next == null
        ? null
        : { previous: w.previous ?? fallback.previous, next: w.next ?? fallback.next };
    return this.scope.db.transaction('configureContextWindow', async (tx) => {
      await saveContextWindow(tx, ns, window);
      const reindexedChunks = await indexObservationContext(tx, ns, null);
      return { namespace: ns, ...(await findContextWindow(tx, ns)), reindexedChunks };
    });
  }
}
