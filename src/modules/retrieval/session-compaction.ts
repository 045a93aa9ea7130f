import type { ContextPackValue, PackedItem, PackSectionValue } from './compiler/pack-types.js';
import type { Replacement } from './compiler/trace.js';
import { itemLabel, pieceCost, renderItem, renderPack, sectionHeader } from './compiler/render.js';
import { type Queryable, forWrites } from '../../db/database.js';
import { estimateTokens } from '../../domain/tokens.js';
import { globalId, parseGlobalId } from '../../global-id.js';
import {
  type SessionCompactRow,
  type SessionState,
  findCompacts,
  saveCompact,
  sessionMessages,
  sessionStates,
  sessionsOfItems,
} from './store/session-store.js';
import { extractiveSummary, fitSummary } from './session-summary.js';

/**
 * Session compaction for routed packs: when more than COMPACT_THRESHOLD items of one session
 * are packed, they are replaced by the session's compact — one summary document — scored by the
 * best of the items it replaces and placed where that item was.
 *
 * Only a pack that ran out of budget (it dropped items for it) is compacted: with budget left,
 * the original messages are served.
 *
 * The compact is extractive (no LLM, `session-summary.ts`): the session's messages in arrival
 * order, whole when short, else their first sentence and those that state a change, under a
 * character cap; fitted to the pack by whole lines, the ones that answer the query kept longest.
 * It is built lazily, the first time a read needs it, and
 * cached in `session_compacts`; it is rebuilt when the session's observation count or latest
 * recordedAt changed. Writes are not touched. Sessions with any restricted observation (visibility
 * scopes) are never compacted: a shared summary must not carry text some reader may not see.
 * The compact never costs more tokens than the items it replaces (its text is cut to fit).
 */

export const COMPACT_THRESHOLD = 2;
export const COMPACT_MAX_MESSAGES = 200;

interface Located {
  item: PackedItem;
  section: PackSectionValue['kind'];
  sessionId: string;
}

type Compaction = { pack: ContextPackValue; compacted: string[]; replacements: Replacement[] };

/** Candidate items' session refs (`<ns>\0<kind>:<local id>`) and the refs to look up per namespace. */
interface SessionRefs {
  byNamespace: Map<string, { chunks: number[]; observations: string[] }>;
  refOf: Map<string, string>;
}

/** What replaces a session's items: the compact for the best of them, nothing for the others. */
type Replaced = Map<string, PackedItem | null>;

export async function compactSessions(
  db: Queryable,
  pack: ContextPackValue,
  visibleScopes: string[] | null,
  charsPerToken: number,
): Promise<Compaction> {
  const unchanged = { pack, compacted: [], replacements: [] };
  if (!pack.budget.dropped.some((d) => d.reason === 'OVER_BUDGET')) return unchanged;
  const refs = sessionRefs(pack);
  if (refs.byNamespace.size === 0) return unchanged;
  const sessionOf = await lookUpSessions(db, refs, visibleScopes);
  const over = [...groupBySession(pack, refs, sessionOf)].filter(
    ([, members]) => members.length > COMPACT_THRESHOLD,
  );
  if (over.length === 0) return unchanged;
  const compacts = await loadCompacts(db, over, visibleScopes);
  const { replaced, compacted } = replaceSessions(over, compacts, pack.query, charsPerToken);
  if (compacted.length === 0) return unchanged;
  return {
    pack: repack(pack, replaced, charsPerToken),
    compacted,
    replacements: [...replaced].map(([itemId, by]) => ({ itemId, by, reason: 'SESSION_COMPACTED' })),
  };
}

/** Items that may belong to a session: chunks and observations, per namespace. */
function sessionRefs(pack: ContextPackValue): SessionRefs {
  const byNamespace: SessionRefs['byNamespace'] = new Map();
  const refOf = new Map<string, string>();
  for (const section of pack.sections) {
    for (const item of section.items) {
      if (!item.namespace || (item.kind !== 'chunk' && item.kind !== 'observation')) continue;
      const parsed = parseGlobalId(item.id);
      const local = parsed?.parts[parsed.parts.length - 1];
      if (local === undefined) continue;
      const refs = byNamespace.get(item.namespace) ?? { chunks: [], observations: [] };
      if (item.kind === 'chunk') refs.chunks.push(Number(local));
      else refs.observations.push(String(local));
      byNamespace.set(item.namespace, refs);
      refOf.set(item.id, `${item.namespace}\u0000${item.kind}:${local}`);
    }
  }
  return { byNamespace, refOf };
}

/** The session of each ref that has one (one statement per namespace). */
async function lookUpSessions(
  db: Queryable,
  refs: SessionRefs,
  visibleScopes: string[] | null,
): Promise<Map<string, string>> {
  const sessionOf = new Map<string, string>();
  await Promise.all(
    [...refs.byNamespace].map(async ([ns, r]) => {
      for (const s of await sessionsOfItems(db, ns, r.chunks, r.observations, visibleScopes)) {
        sessionOf.set(`${ns}\u0000${s.ref}`, s.sessionId);
      }
    }),
  );
  return sessionOf;
}

/** The pack's items by `<ns>\0<session id>`, in pack order. */
function groupBySession(
  pack: ContextPackValue,
  refs: SessionRefs,
  sessionOf: ReadonlyMap<string, string>,
): Map<string, Located[]> {
  const groups = new Map<string, Located[]>();
  for (const section of pack.sections) {
    for (const item of section.items) {
      const ref = refs.refOf.get(item.id);
      const sessionId = ref ? sessionOf.get(ref) : undefined;
      if (!sessionId) continue;
      const key = `${item.namespace}\u0000${sessionId}`;
      groups.set(key, [...(groups.get(key) ?? []), { item, section: section.kind, sessionId }]);
    }
  }
  return groups;
}

/** The compacts of the sessions over the threshold, by `<ns>\0<session id>`: cached, or built now. */
async function loadCompacts(
  db: Queryable,
  over: readonly [string, Located[]][],
  visibleScopes: string[] | null,
): Promise<Map<string, SessionCompactRow>> {
  const compacts = new Map<string, SessionCompactRow>();
  const byNs = new Map<string, string[]>();
  for (const [key] of over) {
    const [ns, sessionId] = key.split('\u0000') as [string, string];
    byNs.set(ns, [...(byNs.get(ns) ?? []), sessionId]);
  }
  await Promise.all(
    [...byNs].map(async ([ns, sessionIds]) => {
      const [states, cached] = await Promise.all([
        sessionStates(db, ns, sessionIds),
        findCompacts(db, ns, sessionIds, visibleScopes),
      ]);
      const cachedBy = new Map(cached.map((c) => [c.sessionId, c]));
      for (const state of states) {
        if (state.restricted) continue;
        const hit = cachedBy.get(state.sessionId);
        const compact = hit && isCurrent(hit, state) ? hit : await buildCompact(db, ns, state);
        if (compact) compacts.set(`${ns}\u0000${state.sessionId}`, compact);
      }
    }),
  );
  return compacts;
}

/** A cached compact still stands while the session's count and latest recordedAt are unchanged. */
function isCurrent(
  hit: SessionCompactRow,
  state: { itemCount: number; lastRecordedAt: Date | string },
): boolean {
  return (
    hit.itemCount === state.itemCount &&
    new Date(hit.lastRecordedAt).getTime() === new Date(state.lastRecordedAt).getTime()
  );
}

/** Summarises the session's messages and caches the compact; null for a session without any. */
async function buildCompact(
  db: Queryable,
  ns: string,
  state: SessionState,
): Promise<SessionCompactRow | null> {
  const messages = await sessionMessages(db, ns, state.sessionId, COMPACT_MAX_MESSAGES);
  if (messages.length === 0) return null;
  const built: SessionCompactRow = {
    sessionId: state.sessionId,
    summary: extractiveSummary(state.sessionId, messages),
    itemCount: state.itemCount,
    lastRecordedAt: state.lastRecordedAt,
    firstAt: messages[0]!.occurredAt,
    lastAt: messages[messages.length - 1]!.occurredAt,
  };
  await saveCompact(forWrites(db), ns, built);
  return built;
}

/** Each session with a compact that fits: its best item becomes the compact, the others go. */
function replaceSessions(
  over: readonly [string, Located[]][],
  compacts: ReadonlyMap<string, SessionCompactRow>,
  query: string,
  charsPerToken: number,
): { replaced: Replaced; compacted: string[] } {
  const replaced: Replaced = new Map();
  const compacted: string[] = [];
  for (const [key, members] of over) {
    const compact = compacts.get(key);
    if (!compact) continue;
    const best = members.reduce((a, b) => (b.item.score > a.item.score ? b : a));
    const item = compactItem(best.item, members, compact, query, charsPerToken);
    if (!item) continue;
    for (const m of members) replaced.set(m.item.id, m.item.id === best.item.id ? item : null);
    compacted.push(compact.sessionId);
  }
  return { replaced, compacted };
}

/** The compact as a pack item in the best item's place; null when not even a cut of it fits. */
function compactItem(
  best: PackedItem,
  members: readonly Located[],
  compact: SessionCompactRow,
  query: string,
  charsPerToken: number,
): PackedItem | null {
  const budget = members.reduce((sum, m) => sum + m.item.tokenEstimate, 0);
  const label = itemLabel([`Session ${compact.sessionId} (compact)`]);
  // Never more than what it replaces.
  const fits = (text: string) =>
    pieceCost(renderItem({ kind: 'session', label, text }), charsPerToken) <= budget;
  const text = fitSummary(compact.summary, query, fits);
  if (!text) return null;
  return {
    ...best,
    kind: 'session',
    id: globalId('SessionCompact', best.namespace!, compact.sessionId),
    text,
    title: `Session ${compact.sessionId}`,
    sourcePath: null,
    score: best.score,
    tokenEstimate: pieceCost(renderItem({ kind: 'session', label, text }), charsPerToken),
    conflict: false,
  };
}

/** The pack with the replacements made, its text rendered again and its budget adjusted. */
function repack(pack: ContextPackValue, replaced: Replaced, charsPerToken: number): ContextPackValue {
  const sections: PackSectionValue[] = pack.sections
    .map((s) => ({
      kind: s.kind,
      items: s.items.flatMap((i) => {
        if (!replaced.has(i.id)) return [i];
        const compact = replaced.get(i.id);
        return compact ? [compact] : [];
      }),
    }))
    .filter((s) => s.items.length > 0);
  const text = rerender(pack, sections, charsPerToken);
  const removed = [...replaced.keys()];
  const oldCost = pack.sections
    .flatMap((s) => s.items)
    .filter((i) => removed.includes(i.id))
    .reduce((sum, i) => sum + i.tokenEstimate, 0);
  const newCost = [...replaced.values()].reduce((sum, i) => sum + (i?.tokenEstimate ?? 0), 0);
  return {
    ...pack,
    sections,
    text,
    tokenEstimate: estimateTokens(text, charsPerToken),
    budget: { ...pack.budget, used: pack.budget.used - oldCost + newCost },
  };
}

/** The pack text again: CURRENT as it was rendered, every other item rendered from its item. */
function rerender(pack: ContextPackValue, sections: PackSectionValue[], charsPerToken: number): string {
  void charsPerToken;
  const currentBlock = (() => {
    if (!pack.sections.some((s) => s.kind === 'CURRENT')) return null;
    const header = sectionHeader('CURRENT');
    const start = pack.text.indexOf(header);
    if (start < 0) return null;
    const body = pack.text.slice(start + header.length + 1);
    const next = pack.sections
      .filter((s) => s.kind !== 'CURRENT')
      .map((s) => body.indexOf(`\n${sectionHeader(s.kind)}`))
      .filter((i) => i >= 0);
    return next.length > 0 ? body.slice(0, Math.min(...next)) : body;
  })();
  return renderPack(
    sections.map((s) => ({
      kind: s.kind,
      blocks:
        s.kind === 'CURRENT'
          ? currentBlock === null
            ? []
            : [currentBlock]
          : s.items.map((i) =>
              renderItem({ kind: i.kind, label: itemLabel([i.title, i.sourcePath]), text: i.text }),
            ),
    })),
  );
}
