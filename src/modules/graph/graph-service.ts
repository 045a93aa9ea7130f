import { z } from 'zod';
import { assertCanRead } from '../../auth/principal.js';
import { badInput, notFound, parseInput } from '../../errors.js';
import { nsKey } from '../../kernel/loaders.js';
import type { ChunkRow } from '../../kernel/store/chunk-store.js';
import type { EntityRow } from '../../kernel/store/entity-store.js';
import type { FactRow } from '../../kernel/store/fact-store.js';
import {
  type AttributeVersionRow,
  type Cursored,
  type ObservationFilter,
  type TimelineCursor,
  type TimelineKind,
  countObservations,
  entityTimeline,
  listObservations,
  shortestPathHalves,
} from '../../kernel/store/graph-store.js';
import type { ObservationRow } from '../../kernel/store/observation-store.js';
import {
  type LazyPage,
  type PageArgs,
  decodeCursor,
  encodeCursor,
  pageWindow,
  toPage,
} from '../../kernel/pagination.js';
import {
  type EntityFactsArgs,
  arrivalWindow,
  entityFactsQuery,
  predicatesSchema,
  timeCursor,
} from '../../kernel/entity-facts.js';
import { prefetchedEndpoint, prefetchedFacts } from '../../kernel/prefetched.js';
import type { RequestScope } from '../../kernel/request-scope.js';
import { keySchema, namespaceSchema } from '../../kernel/validation.js';

export interface Neighbor {
  entity: EntityRow;
  distance: number;
  via: FactRow;
  through: EntityRow | null;
}

export interface GraphPath {
  entities: EntityRow[];
  facts: FactRow[];
}

export interface TimelineEvent {
  kind: TimelineKind;
  at: Date;
  fact: FactRow | null;
  observation: ObservationRow | null;
}

export type TimelinePage = LazyPage<TimelineEvent> & { entity: EntityRow };

/** One version of an entity's title and attributes, with the interval it was in force. */
export type EntityVersionModel = AttributeVersionRow & { namespace: string };

export const MAX_NEIGHBORS = 40;
export const MAX_PATH_HOPS = 4;
export const MAX_PATHS = 50;
/** Edges followed out of each node of a path search, per direction. */
export const PATH_FANOUT = 64;

const neighborArgs = z.object({
  hops: z.number().int().min(1, 'hops must be 1 or 2').max(2, 'hops must be 1 or 2').nullish(),
  predicates: predicatesSchema,
  asOf: z.date().nullish(),
  limit: z
    .number()
    .int()
    .min(1, `limit must be in 1..${MAX_NEIGHBORS}`)
    .max(MAX_NEIGHBORS, `limit must be in 1..${MAX_NEIGHBORS}`)
    .nullish(),
});

const pathArgs = z.object({
  namespace: namespaceSchema,
  from: keySchema,
  to: keySchema,
  maxHops: z
    .number()
    .int()
    .min(1, `maxHops must be in 1..${MAX_PATH_HOPS}`)
    .max(MAX_PATH_HOPS, `maxHops must be in 1..${MAX_PATH_HOPS}`)
    .nullish(),
  asOf: z.date().nullish(),
  limit: z.number().int().min(1).max(MAX_PATHS, `limit must be in 1..${MAX_PATHS}`).nullish(),
});

const intervalArgs = z
  .object({ since: z.date().nullish(), until: z.date().nullish() })
  .refine((a) => !a.since || !a.until || a.since.getTime() < a.until.getTime(), 'since must be before until');

const observationListArgs = intervalArgs.and(
  z.object({
    namespace: namespaceSchema,
    kinds: z.array(z.string().min(1).max(128)).max(50).nullish(),
  }),
);

/**
 * Graph reads: relations of entities, facts and observations (through the request's loaders,
 * so a nesting level costs one statement whatever the number of parents), paths, timelines.
 */
export class GraphService {
  /** entityFactsQuery by its arguments: a walk passes the same few to hundreds of entities. */
  private readonly factsQueries = new Map<string, ReturnType<typeof entityFactsQuery>>();

  constructor(private readonly scope: RequestScope) {}

  private factsQuery(args: EntityFactsArgs, page: PageArgs): ReturnType<typeof entityFactsQuery> {
    const key = JSON.stringify([
      // As text, so an invalid date ("NaN") never shares the key of no date.
      args.asOf instanceof Date ? String(args.asOf.getTime()) : (args.asOf ?? null),
      args.predicates ?? null,
      args.direction ?? null,
      args.includeHistory ?? null,
      page.first ?? null,
      page.after ?? null,
      page.last ?? null,
      page.before ?? null,
    ]);
    let found = this.factsQueries.get(key);
    if (!found) {
      found = entityFactsQuery(args, page);
      if (this.factsQueries.size < 64) this.factsQueries.set(key, found);
    }
    return found;
  }

  private get loaders() {
    return this.scope.loaders;
  }

  private get visibleScopes() {
    return this.scope.principal.scopes;
  }

  private readNamespace(namespace: string): string {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    assertCanRead(this.scope.principal, ns);
    return ns;
  }

  // ---------------------------------------------------------------- root lookups

  async fact(namespace: string, factId: string): Promise<FactRow | null> {
    const ns = this.readNamespace(namespace);
    return this.loaders.fact.load(nsKey(ns, factId));
  }

  async observation(namespace: string, observationId: string): Promise<ObservationRow | null> {
    const ns = this.readNamespace(namespace);
    return this.loaders.observation.load(nsKey(ns, observationId));
  }

  async observations(
    args: { namespace: string; kinds?: string[] | null; since?: Date | null; until?: Date | null },
    page: PageArgs,
  ): Promise<LazyPage<ObservationRow>> {
    const a = parseInput(observationListArgs, args, 'observations arguments');
    const ns = this.readNamespace(a.namespace);
    const filter: ObservationFilter = {
      kinds: a.kinds?.length ? a.kinds : null,
      since: a.since ?? null,
      until: a.until ?? null,
    };
    const { backwards, size, cursor } = arrivalWindow(page);
    const rows = await listObservations(
      this.scope.db,
      ns,
      filter,
      { limit: size + 1, cursor, backwards },
      this.visibleScopes,
    );
    for (const r of rows) this.loaders.observation.prime(nsKey(ns, r.observationId), r);
    return {
      ...toPage(rows, size, backwards, (r) => timeCursor(r.cursorTs, r.cursorArrival), cursor !== null),
      countTotal: () => countObservations(this.scope.db, ns, filter, this.visibleScopes),
    };
  }

  // ---------------------------------------------------------------- entity relations

  /**
   * Facts the entity is an endpoint of, newest validFrom first, as of `asOf` (default now).
   * A page a nested read already fetched is answered synchronously: graphql-js then completes
   * the whole prefetched subtree without a promise per field.
   */
  entityFacts(
    entity: EntityRow,
    args: EntityFactsArgs,
    page: PageArgs,
  ): LazyPage<FactRow> | Promise<LazyPage<FactRow>> {
    assertCanRead(this.scope.principal, entity.namespace);
    const { filter, query } = this.factsQuery(args, page);
    const key = nsKey(entity.namespace, entity.key);
    const toLazyPage = (found: Cursored<FactRow>[]): LazyPage<FactRow> => ({
      ...toPage(
        found,
        query.limit - 1,
        query.backwards,
        (r) => timeCursor(r.cursorTs, r.factId),
        query.cursor !== null,
      ),
      countTotal: () => this.loaders.graph.entityFactCount(filter).load(key),
    });
    // A nested read may have fetched this very page with its parent (one statement per request).
    const prefetched = prefetchedFacts(entity, query);
    if (prefetched) return toLazyPage(prefetched);
    return this.loaders.graph.entityFacts(query).load(key).then(toLazyPage);
  }

  /**
   * A fact's endpoint: from the nested read that fetched the fact (synchronously), else
   * through the loader.
   */
  factEndpoint(fact: FactRow, side: 'subject' | 'object'): EntityRow | null | Promise<EntityRow | null> {
    const prefetched = prefetchedEndpoint(fact, side);
    if (prefetched !== undefined) return prefetched;
    return this.loaders.entity.load(nsKey(fact.namespace, fact[side]));
  }

  /** Entities up to `hops` (1–2) away, nearest first, each with the fact it was reached through. */
  async neighbors(
    entity: EntityRow,
    args: { hops?: number | null; predicates?: string[] | null; asOf?: Date | null; limit?: number | null },
  ): Promise<Neighbor[]> {
    assertCanRead(this.scope.principal, entity.namespace);
    const a = parseInput(neighborArgs, args, 'neighbors arguments');
    const limit = a.limit ?? MAX_NEIGHBORS;
    const hits = await this.loaders.graph
      .neighbors({
        hops: (a.hops ?? 1) as 1 | 2,
        predicates: a.predicates,
        asOf: a.asOf ?? null,
        limit,
        fanout: limit,
      })
      .load(nsKey(entity.namespace, entity.key));
    return this.resolveNeighbors(entity.namespace, hits);
  }

  private async resolveNeighbors(
    namespace: string,
    hits: { key: string; distance: number; factId: string; through: string | null }[],
  ): Promise<Neighbor[]> {
    const [entities, facts, throughs] = await Promise.all([
      this.loaders.entity.loadMany(hits.map((h) => nsKey(namespace, h.key))),
      this.loaders.fact.loadMany(hits.map((h) => nsKey(namespace, h.factId))),
      this.loaders.entity.loadMany(hits.map((h) => nsKey(namespace, h.through ?? h.key))),
    ]);
    const out: Neighbor[] = [];
    hits.forEach((h, i) => {
      const entity = rowOrNull(entities[i]);
      const via = rowOrNull(facts[i]);
      // Both were visible a moment ago in the same request; a concurrent purge can remove them.
      if (!entity || !via) return;
      out.push({ entity, distance: h.distance, via, through: h.through ? rowOrNull(throughs[i]) : null });
    });
    return out;
  }

  /** Attributes from the version in force at `asOf`; the current ones when asOf is not given. */
  async attributes(
    entity: EntityRow,
    asOf: Date | null | undefined,
  ): Promise<Record<string, unknown> | null> {
    assertCanRead(this.scope.principal, entity.namespace);
    if (!asOf) return entity.attributes;
    const version = await this.loaders.graph.attributesAt(asOf).load(nsKey(entity.namespace, entity.key));
    return version?.attributes ?? null;
  }

  /**
   * The version (title and attributes) in force at `asOf`, default now; null when none was:
   * before the entity's first version, or for a placeholder that no write has filled in.
   */
  async version(entity: EntityRow, asOf: Date | null | undefined): Promise<EntityVersionModel | null> {
    assertCanRead(this.scope.principal, entity.namespace);
    const version = await this.loaders.graph
      .attributesAt(asOf ?? new Date())
      .load(nsKey(entity.namespace, entity.key));
    return version ? { ...version, namespace: entity.namespace } : null;
  }

  async entityChunks(entity: EntityRow, page: PageArgs): Promise<LazyPage<ChunkRow>> {
    assertCanRead(this.scope.principal, entity.namespace);
    const { backwards, size } = pageWindow(page);
    const afterOrder = page.after ? ordCursor(page.after) : null;
    const beforeOrder = page.before ? ordCursor(page.before) : null;
    const key = nsKey(entity.namespace, entity.key);
    const rows = await this.loaders.graph
      .entityChunks({ limit: size + 1, afterOrder, beforeOrder, backwards })
      .load(key);
    return {
      ...toPage(
        rows,
        size,
        backwards,
        (r) => encodeCursor([r.order]),
        (backwards ? beforeOrder : afterOrder) !== null,
      ),
      countTotal: () => this.loaders.graph.entityChunkCount.load(key),
    };
  }

  /** The observations an entity rests on (those mentioning it, those that wrote its attributes). */
  async entityObservations(entity: EntityRow, page: PageArgs): Promise<LazyPage<ObservationRow>> {
    assertCanRead(this.scope.principal, entity.namespace);
    const { backwards, size, cursor } = arrivalWindow(page);
    const key = nsKey(entity.namespace, entity.key);
    const rows = await this.loaders.graph
      .entityObservations({ limit: size + 1, cursor, backwards })
      .load(key);
    return {
      ...toPage(rows, size, backwards, (r) => timeCursor(r.cursorTs, r.cursorArrival), cursor !== null),
      countTotal: () => this.loaders.graph.entityObservationCount.load(key),
    };
  }

  // ---------------------------------------------------------------- observation relations

  /** Facts the observation is evidence for, oldest first (every version, EVIDENCE_LOST aside). */
  async observationFacts(observation: ObservationRow): Promise<FactRow[]> {
    assertCanRead(this.scope.principal, observation.namespace);
    return this.loaders.graph.observationFacts.load(nsKey(observation.namespace, observation.observationId));
  }

  async observationEpisodes(observation: ObservationRow): Promise<EntityRow[]> {
    assertCanRead(this.scope.principal, observation.namespace);
    const ns = observation.namespace;
    const keys = await this.loaders.graph.observationEpisodeKeys.load(nsKey(ns, observation.observationId));
    return (await this.loaders.entity.loadMany(keys.map((k) => nsKey(ns, k)))).filter(isRowValue);
  }

  // ---------------------------------------------------------------- paths and timelines

  /**
   * Shortest connecting paths between two entities, ignoring edge direction, through facts
   * live at `asOf`. Bounded: ≤ 4 hops, ≤ PATH_FANOUT edges per node and direction.
   */
  async paths(args: {
    namespace: string;
    from: string;
    to: string;
    maxHops?: number | null;
    asOf?: Date | null;
    limit?: number | null;
  }): Promise<GraphPath[]> {
    const a = parseInput(pathArgs, args, 'paths arguments');
    const ns = this.readNamespace(a.namespace);
    if (a.from === a.to) throw badInput('from and to are the same entity.');
    const [from, to] = await this.loaders.entity.loadMany([nsKey(ns, a.from), nsKey(ns, a.to)]);
    if (!isRowValue(from)) throw notFound(`Entity "${a.from}" was not found in namespace "${ns}".`);
    if (!isRowValue(to)) throw notFound(`Entity "${a.to}" was not found in namespace "${ns}".`);
    const limit = a.limit ?? 10;
    const halves = await shortestPathHalves(
      this.scope.db,
      ns,
      a.from,
      a.to,
      { maxHops: a.maxHops ?? 3, asOf: a.asOf ?? null, fanout: PATH_FANOUT, rowLimit: limit * 20 },
      this.visibleScopes,
    );
    // One path is found once per meeting point along it: keep the first of each fact sequence.
    const seen = new Set<string>();
    const stitched: { nodes: string[]; facts: string[] }[] = [];
    for (const h of halves) {
      const nodes = [...h.fnodes, ...h.bnodes.slice(0, -1).reverse()];
      const facts = [...h.ffacts, ...[...h.bfacts].reverse()];
      const id = facts.join('|');
      if (seen.has(id)) continue;
      seen.add(id);
      stitched.push({ nodes, facts });
    }
    stitched.sort((x, y) => x.facts.join('|').localeCompare(y.facts.join('|')));
    const kept = stitched.slice(0, limit);
    const resolved = await Promise.all(
      kept.map(async (p) => {
        const [entities, facts] = await Promise.all([
          this.loaders.entity.loadMany(p.nodes.map((k) => nsKey(ns, k))),
          this.loaders.fact.loadMany(p.facts.map((id) => nsKey(ns, id))),
        ]);
        const es = entities.filter(isRowValue);
        const fs = facts.filter(isRowValue);
        return es.length === p.nodes.length && fs.length === p.facts.length
          ? { entities: es, facts: fs }
          : null;
      }),
    );
    return resolved.filter((p): p is GraphPath => p !== null);
  }

  /**
   * An entity's history in time order: facts opened and closed (superseded and retracted
   * versions included), and the observations it rests on, in [since, until).
   */
  async timeline(
    args: { namespace: string; key: string; since?: Date | null; until?: Date | null },
    page: PageArgs,
  ): Promise<TimelinePage | null> {
    const ns = this.readNamespace(args.namespace);
    const key = parseInput(keySchema, args.key, 'key');
    const interval = parseInput(intervalArgs, { since: args.since, until: args.until }, 'timeline interval');
    const entity = await this.loaders.entity.load(nsKey(ns, key));
    if (!entity) return null;
    const { backwards, size } = pageWindow(page, 50);
    const raw = backwards ? page.before : page.after;
    const cursor = raw ? timelineCursor(raw) : null;
    const rows = await entityTimeline(
      this.scope.db,
      ns,
      key,
      { since: interval.since ?? null, until: interval.until ?? null, limit: size + 1, cursor, backwards },
      this.visibleScopes,
    );
    const items = await Promise.all(
      rows.map((r) =>
        r.kind === 'OBSERVATION'
          ? this.loaders.observation.load(nsKey(ns, r.itemId))
          : this.loaders.fact.load(nsKey(ns, r.itemId)),
      ),
    );
    const events = rows.map((r, i) => ({
      row: r,
      event: {
        kind: r.kind,
        at: r.at,
        fact: r.kind === 'OBSERVATION' ? null : (items[i] as FactRow | null),
        observation: r.kind === 'OBSERVATION' ? (items[i] as ObservationRow | null) : null,
      } satisfies TimelineEvent,
    }));
    const result = toPage(
      events,
      size,
      backwards,
      (e) => encodeCursor([e.row.cursorTs, e.row.rank, e.row.seq, e.row.itemId]),
      cursor !== null,
    );
    return {
      entity,
      pageInfo: result.pageInfo,
      edges: result.edges.map((e) => ({ cursor: e.cursor, node: e.node.event })),
    };
  }
}

// ------------------------------------------------------------------ cursors

function ordCursor(raw: string): number {
  const [order] = decodeCursor(raw, 1);
  if (typeof order !== 'number' || !Number.isInteger(order)) {
    throw badInput('Invalid cursor: pass back a cursor this API returned.');
  }
  return order;
}

function timelineCursor(raw: string): TimelineCursor {
  const [micros, rank, seq, id] = decodeCursor(raw, 4);
  if (
    typeof micros !== 'string' ||
    !/^-?\d{1,19}$/.test(micros) ||
    typeof rank !== 'number' ||
    typeof seq !== 'string' ||
    !/^\d{1,18}$/.test(seq) ||
    typeof id !== 'string'
  ) {
    throw badInput('Invalid cursor: pass back a cursor this API returned.');
  }
  return { micros, rank, seq, id };
}

function rowOrNull<T>(value: T | Error | null): T | null {
  return value instanceof Error ? null : value;
}

function isRowValue<T>(value: T | Error | null): value is T {
  return value !== null && !(value instanceof Error);
}
