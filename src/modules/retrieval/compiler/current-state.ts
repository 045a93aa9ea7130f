/**
 * The pack's leading section, CURRENT_STATE: what holds at `asOf` for the entities the query
 * names (and the anchors, the subject). Their facts valid then and their attributes as of then,
 * ranked by how well predicate (attribute name) and other side (value) answer the query; a
 * superseded or closed fact only as history, marked so, right after its successor; attribute
 * values that held before after the value in force. Document links are structure, not state:
 * they come in only when the query asks for the link itself. What does not match the query
 * fills the section only while it stays small. Pure: rows in, scored candidates out.
 */
import { globalId } from '../../../global-id.js';
import type { ChannelRunner } from '../pipeline/channel-runner.js';
import { type StateEntityRow, type StateFactRow, currentStateOf } from '../store/current-state-store.js';
import { type Candidate, candidateKey } from './candidates.js';
import { factSentence, formatInstant } from './hydrate.js';
import type { ScoreSignals, Scored } from './signals.js';
import type { CompileDeps, CompileRequest } from './pack-types.js';
import type { CompilePlan } from './plan.js';
import { contentWords, fieldWords, nameWords, relationMatch } from './state-match.js';

/** Items of the section that do not answer the query: an overview, kept short. */
const UNMATCHED_ITEMS = 4;
/** Closed versions listed after a current fact. */
const HISTORY_PER_FACT = 2;

export interface StateRows {
  entities: StateEntityRow[];
  facts: StateFactRow[];
}

interface Ranked {
  candidate: Candidate;
  match: number;
}

export const NO_SIGNALS: Omit<ScoreSignals, 'state'> = {
  rrf: 0,
  channels: [],
  exactId: 0,
  entity: 0,
  entities: [],
  scope: 0,
  current: 0,
  evidence: 0,
  freshness: 0,
  label: 0,
  terms: 0,
  asking: 0,
  newer: 0,
};

/** The section's items, in order, scored so that the section lists them so (see ScoreSignals.state). */
export function currentStateItems(rows: StateRows, query: string): Scored[] {
  const names = new Set(rows.entities.flatMap((e) => fieldWords(e.title)));
  const words = contentWords(query, names);
  const ordered: Candidate[] = [];
  const unmatched: Candidate[] = [];
  for (const entity of rows.entities) {
    const facts = rows.facts.filter((f) => f.entity === entity.key && f.namespace === entity.namespace);
    const ranked = rankFacts(
      facts.filter((f) => f.current),
      entity,
      words,
    );
    const attributes = attributeItem(entity, words);
    const items = attributes ? [...ranked, attributes].sort(byMatch) : ranked;
    const matched = items.filter((r) => r.match > 0);
    // An entity the query names without asking anything of it: an overview of what holds. An
    // anchor without a question of it is served by the channels (RELEVANT_FACTS, RELATED_ENTITIES).
    if (matched.length === 0 && entity.prio > 0) unmatched.push(...items.map((r) => r.candidate));
    for (const r of matched) {
      if (ordered.includes(r.candidate)) continue;
      ordered.push(r.candidate);
      if (r.candidate.kind !== 'fact') continue;
      ordered.push(...conflictPartners(r.candidate, items, ordered), ...historyOf(r.candidate, facts));
    }
  }
  const all = [...ordered, ...unmatched.filter((c) => !ordered.includes(c)).slice(0, UNMATCHED_ITEMS)];
  return all.map((candidate, i) => {
    const state = 1 - i / 1000;
    return { candidate, score: state, signals: { ...NO_SIGNALS, state } };
  });
}

function byMatch(a: Ranked, b: Ranked): number {
  return b.match - a.match;
}

/** Current facts by match, then the newer first (arrival order breaking equal starts). */
function rankFacts(
  facts: readonly StateFactRow[],
  entity: StateEntityRow,
  words: readonly string[],
): Ranked[] {
  return facts
    .map((f) => {
      const other = f.subject === entity.key ? f.objectTitle : f.subjectTitle;
      const match = relationMatch(words, f.predicate, other);
      return { row: f, match: f.structural && match < 2 ? -1 : match };
    })
    .filter((r) => r.match >= 0)
    .sort(
      (a, b) =>
        b.match - a.match ||
        Date.parse(b.row.validFrom) - Date.parse(a.row.validFrom) ||
        Date.parse(b.row.recordedAt) - Date.parse(a.row.recordedAt) ||
        (a.row.factId < b.row.factId ? -1 : 1),
    )
    .map((r) => ({ candidate: factCandidate(r.row, false), match: r.match }));
}

/** The other versions of an open conflict, listed right after the first: served together or not at all. */
function conflictPartners(
  fact: Candidate,
  items: readonly Ranked[],
  listed: readonly Candidate[],
): Candidate[] {
  if (!fact.conflict) return [];
  return items
    .map((r) => r.candidate)
    .filter((c) => c.kind === 'fact' && fact.conflictsWith.includes(c.localId) && !listed.includes(c));
}

/** Closed versions of the same relation of the same entity, newest first. */
function historyOf(current: Candidate, facts: readonly StateFactRow[]): Candidate[] {
  const row = facts.find((f) => f.factId === current.localId);
  if (!row) return [];
  const side = row.subject === row.entity ? 'subject' : 'object';
  return facts
    .filter(
      (f) => !f.current && f.predicate === row.predicate && f[side] === row[side] && f.factId !== row.factId,
    )
    .sort((a, b) => Date.parse(b.validFrom) - Date.parse(a.validFrom))
    .slice(0, HISTORY_PER_FACT)
    .map((f) => factCandidate(f, true));
}

function factCandidate(f: StateFactRow, history: boolean): Candidate {
  const validFrom = new Date(f.validFrom);
  const validTo = f.validTo ? new Date(f.validTo) : null;
  const sentence = factSentence(f.subjectTitle, f.predicate, f.objectTitle, validFrom, validTo, f.conflict);
  return {
    key: candidateKey({ kind: 'fact', namespace: f.namespace, id: f.factId }),
    kind: 'fact',
    namespace: f.namespace,
    localId: f.factId,
    globalId: globalId('Fact', f.namespace, f.factId),
    section: 'CURRENT_STATE',
    title: f.subjectTitle,
    text: history
      ? `[history${f.status === 'SUPERSEDED' ? ', superseded' : ', closed'}] ${sentence}`
      : sentence,
    sourcePath: f.sourcePath,
    scopes: f.scopes,
    time: validFrom,
    evidenceRank: 0,
    currentFact: !history && validTo === null,
    conflict: f.conflict && !history,
    conflictsWith: f.conflictsWith,
    distance: null,
    identifiers: [f.factId, f.subject, f.object],
    namedEntities: [],
    entityKeys: [f.subject, f.object],
    source: null,
    pii: f.pii,
  };
}

function valueText(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/**
 * One line per entity: its attributes as of asOf, those the query asks for first, each with
 * the values it had before (newest first) and since when the value holds.
 */
function attributeItem(entity: StateEntityRow, words: readonly string[]): Ranked | null {
  const attrs = entity.attributes ?? {};
  const names = Object.keys(attrs);
  if (names.length === 0) return null;
  const scored = names
    .map((name) => ({ name, match: relationMatch(words, name, valueText(attrs[name])) }))
    .sort((a, b) => b.match - a.match);
  const parts = scored.map(({ name }) => {
    const value = valueText(attrs[name]);
    const before = previousValues(entity, name, value);
    const since = changedAt(entity, name, value);
    const notes = [since ? `since ${since}` : null, before.length ? `before: ${before.join(', ')}` : null]
      .filter(Boolean)
      .join('; ');
    return notes ? `${name}: ${value} (${notes})` : `${name}: ${value}`;
  });
  const head =
    entity.title === entity.key
      ? `${entity.title} (${entity.kind})`
      : `${entity.title} (${entity.kind}, ${entity.key})`;
  const text = `${head} — ${parts.join('; ')}`;
  return {
    match: scored[0]?.match ?? 0,
    candidate: {
      key: candidateKey({ kind: 'entity', namespace: entity.namespace, id: entity.key }),
      kind: 'entity',
      namespace: entity.namespace,
      localId: entity.key,
      globalId: globalId('Entity', entity.namespace, entity.key),
      section: 'CURRENT_STATE',
      title: entity.title,
      text: text.length > 600 ? `${text.slice(0, 599)}…` : text,
      sourcePath: null,
      scopes: entity.scopes,
      time: entity.since ? new Date(entity.since) : null,
      evidenceRank: 0,
      currentFact: false,
      conflict: false,
      conflictsWith: [],
      distance: null,
      identifiers: [entity.key],
      namedEntities: [],
      entityKeys: [entity.key],
      source: null,
      pii: entity.pii,
    },
  };
}

/** Distinct earlier values of one attribute, newest first, the current one aside. */
function previousValues(entity: StateEntityRow, name: string, current: string): string[] {
  const out: string[] = [];
  for (const v of entity.previous) {
    if (!(name in v.attributes)) continue;
    const text = valueText(v.attributes[name]);
    if (text !== current && !out.includes(text)) out.push(text);
  }
  return out.slice(0, 2);
}

/** When the attribute took its current value, if a version before held another one. */
function changedAt(entity: StateEntityRow, name: string, current: string): string | null {
  let since = entity.since;
  for (const v of entity.previous) {
    if (!(name in v.attributes) || valueText(v.attributes[name]) !== current) break;
    since = v.validFrom;
  }
  const changed = entity.previous.some(
    (v) => name in v.attributes && valueText(v.attributes[name]) !== current,
  );
  return changed && since ? formatInstant(new Date(since)) : null;
}

/** Entities read for the section, at most; facts per entity and side. */
const MAX_ENTITIES = 4;
const FACTS_PER_ENTITY = 40;

/**
 * Reads the rows of the section: skipped without anything to name (no query, anchors or
 * subject) and inside a time window (every item must come from it). A failure or timeout
 * leaves the section empty with a warning, like any channel's.
 */
export async function readCurrentState(
  req: CompileRequest,
  plan: CompilePlan,
  deps: Pick<CompileDeps, 'db'>,
  runner: ChannelRunner,
  requested: readonly string[],
): Promise<StateRows> {
  const names = plan.hasQuery ? nameWords(plan.query) : [];
  if (req.window || (names.length === 0 && requested.length === 0)) return { entities: [], facts: [] };
  const [rows] = await runner.run('current_state', 0, async () => [
    await currentStateOf(
      deps.db,
      {
        namespaces: req.namespaces,
        keys: [...requested],
        names,
        query: plan.hasQuery ? plan.query : null,
        asOf: plan.asOf,
        heldAt: plan.heldAt,
        scopes: plan.relevanceScopes,
        maxEntities: MAX_ENTITIES,
        perEntity: FACTS_PER_ENTITY,
      },
      plan.visibleScopes,
    ),
  ]);
  return rows ?? { entities: [], facts: [] };
}
