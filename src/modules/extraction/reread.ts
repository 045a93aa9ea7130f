import type { RequestScope } from '../../kernel/request-scope.js';
import { extractFromObservations } from './extract-on-write.js';
import { countObservationsToRead, pageObservationsToRead } from './store/source-store.js';

const PAGE = 200;

/**
 * Extraction over what is already stored (`memgate extract`): the namespace's observations
 * recorded since `since` (null: all), page by page, each page in its own transaction through
 * the same call the write path makes — rules write (repeats only reinforce), and with a model
 * configured the texts are queued (ones already queued stay as they are).
 */
export async function rereadByRules(
  scope: RequestScope,
  namespace: string,
  since: Date | null,
  onProgress?: (done: number, total: number) => void,
): Promise<{ read: number }> {
  const total = await countObservationsToRead(scope.db, namespace, since);
  let after: { recordedAt: Date; observationId: string } | null = null;
  let read = 0;
  onProgress?.(0, total);
  for (;;) {
    const page = await pageObservationsToRead(scope.db, namespace, since, after, PAGE);
    if (page.length === 0) break;
    await scope.db.transaction('extract', (tx) => extractFromObservations(scope, tx, namespace, page));
    read += page.length;
    const last = page[page.length - 1]!;
    after = { recordedAt: last.recordedAt, observationId: last.observationId };
    onProgress?.(read, total);
  }
  return { read };
}
