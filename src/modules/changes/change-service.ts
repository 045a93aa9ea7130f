import { z } from 'zod';
import { assertCanRead } from '../../auth/principal.js';
import { MemgateError, parseInput } from '../../errors.js';
import { nsKey } from '../../kernel/loaders.js';
import type { EntityRow } from '../../kernel/store/entity-store.js';
import type { FactRow } from '../../kernel/store/fact-store.js';
import type { ObservationRow } from '../../kernel/store/observation-store.js';
import { removedRowsVisibleTo } from './store/change-visibility-store.js';
import type { ChangeKind, RemovedRow } from '../../kernel/change-notice.js';
import { ChangeQueue, type Ending } from './change-queue.js';
import { DocumentService, type SourceDocumentView } from '../documents/index.js';
import type { RequestScope } from '../../kernel/request-scope.js';
import { keySchema, namespaceSchema } from '../../kernel/validation.js';

/** One changed row, before it is re-read as the subscriber. */
export interface PendingChange {
  namespace: string;
  kind: ChangeKind;
  id: string;
  /** Set when the row was deleted (a purge): what deciding its visibility needs. */
  removed?: RemovedRow;
}

/** One changed row as the subscriber may see it. */
export interface LiveChange extends Omit<PendingChange, 'removed'> {
  /** The row is gone (purged); the row fields are then null. */
  removed: boolean;
  entity: EntityRow | null;
  fact: FactRow | null;
  observation: ObservationRow | null;
  document: SourceDocumentView | null;
}

export interface WatchArgs {
  namespace: string;
  kinds?: readonly ChangeKind[] | null;
  entityKeys?: readonly string[] | null;
  /**
   * Whether the subscriber's credentials still hold, asked while the stream is open: a revoked
   * token (or changed rights) ends it within `recheckMs`.
   */
  stillAuthorized?: () => Promise<boolean>;
}

/** How often an open subscription re-checks its token (the tokens file is re-read as often). */
const RECHECK_MS = 1000;

const entityKeysSchema = z.array(keySchema).max(100, 'at most 100 entityKeys');

/** Live changes: a subscriber is told only of rows it can read, re-read through its loaders. */
export class ChangeService {
  constructor(private readonly scope: RequestScope) {}

  /**
   * The notices of one namespace (ids only), bounded per subscriber. Filtering by kind here is
   * free; filtering by entity key needs the row, so it happens in `read`.
   */
  watch(args: WatchArgs): AsyncIterableIterator<PendingChange | Ending> {
    const namespace = parseInput(namespaceSchema, args.namespace, 'namespace');
    assertCanRead(this.scope.principal, namespace);
    parseInput(entityKeysSchema, args.entityKeys ?? [], 'entityKeys');
    const feed = this.scope.deps.changes;
    if (!feed) throw new MemgateError('UNAVAILABLE', 'Live updates are not available on this server.');
    const kinds = args.kinds?.length ? new Set(args.kinds) : null;
    let unsubscribe = () => {};
    let recheck: NodeJS.Timeout | undefined;
    const queue = new ChangeQueue<PendingChange>(this.scope.deps.config.subscriptionQueue, () => {
      unsubscribe();
      clearInterval(recheck);
    });
    unsubscribe = feed.subscribe(
      (notice) => {
        if (notice.namespace !== namespace || (kinds && !kinds.has(notice.kind))) return;
        const changes: PendingChange[] = [
          ...notice.ids.map((id) => ({ namespace, kind: notice.kind, id })),
          ...notice.removed.map((removed) => ({ namespace, kind: notice.kind, id: removed.id, removed })),
        ];
        for (const change of changes) {
          if (!queue.push(change)) break;
        }
      },
      this.scope.principal.id,
      () => queue.end({ shutdown: true }),
    );
    const stillAuthorized = args.stillAuthorized;
    if (stillAuthorized) {
      recheck = setInterval(() => {
        stillAuthorized().then(
          (ok) => ok || queue.end({ revoked: true }),
          () => queue.end({ revoked: true }),
        );
      }, RECHECK_MS);
      recheck.unref();
    }
    return queue;
  }

  /** The change as this principal may see it, or null when the row is hidden, gone or filtered out. */
  async read(change: PendingChange, entityKeys?: readonly string[] | null): Promise<LiveChange | null> {
    const { loaders } = this.scope;
    const keys = entityKeys?.length ? new Set(entityKeys) : null;
    const { removed, ...changed } = change;
    const live: LiveChange = {
      ...changed,
      removed: false,
      entity: null,
      fact: null,
      observation: null,
      document: null,
    };
    if (removed) return (await this.removedVisible(removed, keys)) ? { ...live, removed: true } : null;
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

  /** A removed row reaches only subscribers its visibility (and its endpoints') admitted. */
  private async removedVisible(removed: RemovedRow, keys: ReadonlySet<string> | null): Promise<boolean> {
    if (keys && !removed.refs.some((ref) => keys.has(ref))) return false;
    const visible = await removedRowsVisibleTo(this.scope.db, [removed], this.scope.principal.scopes);
    return visible.has(removed.id);
  }
}
