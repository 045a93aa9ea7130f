import DataLoader from 'dataloader';
import { assertCanRead, assertCanWrite } from '../../auth/principal.js';
import { forbidden, parseInput } from '../../errors.js';
import { byNamespace, nsKey } from '../../kernel/loaders.js';
import type { RequestScope } from '../../kernel/request-scope.js';
import type { EntityRow } from '../../kernel/store/entity-store.js';
import { namespaceSchema } from '../../kernel/validation.js';
import { summaryMaterial } from './store/summary-material-store.js';
import {
  type StoredSummary,
  type SummaryCounts,
  countSummaries,
  findSummaries,
  markNamespace,
} from './store/summary-store.js';
import type { SummarySources } from './summary-material.js';
import { summaryText } from './summary-text.js';

/** An entity's summary as served: stored (a chunk), or built for this reader on read. */
export interface EntitySummaryView {
  namespace: string;
  entityKey: string;
  text: string;
  sources: SummarySources;
  /** The instant the summary states what holds at. */
  asOf: Date;
  builtAt: Date;
  by: string;
  /** The stored chunk; null when built on read. */
  chunkId: number | null;
  /** A change to its evidence is waiting to be summarised (a stored summary only). */
  stale: boolean;
}

const sourceCount = (s: StoredSummary) => s.meta.sources.facts.length + s.meta.sources.observations.length;

/** The richest stored summary each entity has for this reader (most sources; the first class on a tie). */
function richest(rows: readonly StoredSummary[]): Map<string, StoredSummary> {
  const best = new Map<string, StoredSummary>();
  for (const r of rows) {
    const held = best.get(r.nodeKey);
    if (
      !held ||
      sourceCount(r) > sourceCount(held) ||
      (sourceCount(r) === sourceCount(held) && r.order > held.order)
    )
      best.set(r.nodeKey, r);
  }
  return best;
}

const perRequest = new WeakMap<RequestScope, DataLoader<string, EntitySummaryView | null>>();

/**
 * Entity summaries for readers. Which one a reader gets (documented in docs/summaries.md):
 * without `asOf`, the richest stored summary it may see; when none is stored yet (the refresher has
 * not run) or `asOf` names an earlier instant, one built on read from exactly the rows this reader
 * may see as of then. Either way it never rests on a row the reader cannot see.
 */
export class SummaryService {
  constructor(private readonly scope: RequestScope) {}

  async forEntity(entity: EntityRow, asOf: Date | null): Promise<EntitySummaryView | null> {
    if (asOf) return (await this.builtOnRead(entity.namespace, [entity.key], asOf))[0] ?? null;
    return this.storedLoader().load(nsKey(entity.namespace, entity.key));
  }

  private storedLoader(): DataLoader<string, EntitySummaryView | null> {
    let loader = perRequest.get(this.scope);
    if (!loader) {
      loader = new DataLoader(byNamespace((ns, keys) => this.current(ns, keys)));
      perRequest.set(this.scope, loader);
    }
    return loader;
  }

  /** Stored summaries of `keys`, and for those without one, summaries built on read now. */
  private async current(namespace: string, keys: string[]): Promise<(EntitySummaryView | null)[]> {
    const stored = richest(await findSummaries(this.scope.db, namespace, keys, this.scope.principal.scopes));
    const missing = keys.filter((k) => !stored.has(k));
    const built = new Map(
      (await this.builtOnRead(namespace, missing, new Date())).map((v) => [v.entityKey, v] as const),
    );
    return keys.map((k) => {
      const s = stored.get(k);
      return s ? storedView(namespace, s) : (built.get(k) ?? null);
    });
  }

  private async builtOnRead(namespace: string, keys: string[], asOf: Date): Promise<EntitySummaryView[]> {
    if (keys.length === 0) return [];
    const materials = await summaryMaterial(
      this.scope.db,
      namespace,
      keys,
      asOf,
      this.scope.principal.scopes,
    );
    return materials.flatMap((m) => {
      const draft = summaryText(m, asOf);
      if (!draft) return [];
      return [
        {
          namespace,
          entityKey: m.entity.key,
          text: draft.text,
          sources: draft.sources,
          asOf,
          builtAt: new Date(),
          by: 'extractive',
          chunkId: null,
          stale: false,
        },
      ];
    });
  }

  /** Queues every entity of the namespace for a rebuild (admin); how many were queued. */
  async rebuild(namespace: string): Promise<number> {
    const ns = this.checkAdmin(namespace);
    const queued = await markNamespace(this.scope.db, ns);
    this.scope.deps.wakeSummaries?.();
    return queued;
  }

  async status(namespace: string): Promise<SummaryCounts & { namespace: string }> {
    const ns = this.checkAdmin(namespace);
    return { namespace: ns, ...(await countSummaries(this.scope.db, ns)) };
  }

  /** Counts and rebuilds cover every entity, hidden ones included: admins or unrestricted principals. */
  private checkAdmin(namespace: string): string {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    const { principal } = this.scope;
    assertCanRead(principal, ns);
    assertCanWrite(principal, ns);
    if (!principal.admin && principal.scopes !== null) {
      throw forbidden(
        'Summaries of a whole namespace cover every entity; it needs an admin principal or one that sees every scope.',
      );
    }
    return ns;
  }
}

function storedView(namespace: string, s: StoredSummary): EntitySummaryView {
  const builtAt = new Date(s.meta.builtAt);
  return {
    namespace,
    entityKey: s.nodeKey,
    text: s.text,
    sources: s.meta.sources,
    asOf: builtAt,
    builtAt,
    by: s.meta.by,
    chunkId: s.chunkId,
    stale: s.stale,
  };
}
