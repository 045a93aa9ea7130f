import { z } from 'zod';
import { assertCanRead } from '../auth/principal.js';
import { MemgateError, parseInput } from '../errors.js';
import { nsKey } from '../loaders.js';
import type { EntityRow } from '../store/entity-store.js';
import type { FactRow } from '../store/fact-store.js';
import type { ObservationRow } from '../store/observation-store.js';
import type { ChangeKind } from './change-feed.js';
import { ChangeQueue, type Overflow } from './change-queue.js';
import { DocumentService, type SourceDocumentView } from './document-service.js';
import type { RequestScope } from './request-scope.js';
import { keySchema, namespaceSchema } from './validation.js';

/** One changed row, before it is re-read as the subscriber. */
export interface PendingChange {
  namespace: string;
  kind: ChangeKind;
  id: string;
}

/** One changed row as the subscriber may see it. */
export interface LiveChange extends PendingChange {
  entity: EntityRow | null;
  fact: FactRow | null;
  observation: ObservationRow | null;
  document: SourceDocumentView | null;
}

export interface WatchArgs {
  namespace: string;
  kinds?: readonly ChangeKind[] | null;
  entityKeys?: readonly string[] | null;
}

const entityKeysSchema = z.array(keySchema).max(100, 'at most 100 entityKeys');

/** Live changes: a subscriber is told only of rows it can read, re-read through its loaders. */
export class ChangeService {
  constructor(private readonly scope: RequestScope) {}

  /**
   * The notices of one namespace (ids only), bounded per subscriber. Filtering by kind here is
   * free; filtering by entity key needs the row, so it happens in `read`.
   */
  watch(args: WatchArgs): AsyncIterableIterator<PendingChange | Overflow> {
    const namespace = parseInput(namespaceSchema, args.namespace, 'namespace');
    assertCanRead(this.scope.principal, namespace);
    parseInput(entityKeysSchema, args.entityKeys ?? [], 'entityKeys');
    const feed = this.scope.deps.changes;
    if (!feed) throw new MemgateError('UNAVAILABLE', 'Live updates are not available on this server.');
    const kinds = args.kinds?.length ? new Set(args.kinds) : null;
    let unsubscribe = () => {};
    const queue = new ChangeQueue<PendingChange>(this.scope.deps.config.subscriptionQueue, () =>
      unsubscribe(),
    );
    unsubscribe = feed.subscribe((notice) => {
      if (notice.namespace !== namespace || (kinds && !kinds.has(notice.kind))) return;
      for (const id of notice.ids) {
        if (!queue.push({ namespace, kind: notice.kind, id })) break;
      }
    });
    return queue;
  }

  /** The change as this principal may see it, or null when the row is hidden, gone or filtered out. */
  async read(change: PendingChange, entityKeys?: readonly string[] | null): Promise<LiveChange | null> {
    const { loaders } = this.scope;
    const keys = entityKeys?.length ? new Set(entityKeys) : null;
    const live: LiveChange = { ...change, entity: null, fact: null, observation: null, document: null };
    const key = nsKey(change.namespace, change.id);
    switch (change.kind) {
      case 'ENTITY':
        live.entity = await loaders.entity.load(key);
        return live.entity && (!keys || keys.has(live.entity.key)) ? live : null;
      case 'DOCUMENT':
        live.document = await new DocumentService(this.scope).source(change.namespace, change.id);
        return live.document && (!keys || keys.has(live.document.key)) ? live : null;
      case 'FACT':
        live.fact = await loaders.fact.load(key);
        return live.fact && (!keys || keys.has(live.fact.subject) || keys.has(live.fact.object))
          ? live
          : null;
      case 'OBSERVATION': {
        live.observation = await loaders.observation.load(key);
        const o = live.observation;
        return o && (!keys || keys.has(o.subjectId ?? '') || keys.has(o.actorId ?? '')) ? live : null;
      }
    }
  }
}
