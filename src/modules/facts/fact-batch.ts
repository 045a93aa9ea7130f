/**
 * Fact assertions for a whole batch at once, with the answers `writeFact` gives one by one.
 *
 * Validation and citations are checked for every item first (one statement for all cited
 * observations, one for the single-valued predicates). Then, round by round (the k-th assertion
 * of each subject/predicate/object in round k, so assertions of the same triple see each other
 * in order), one statement resolves what every assertion lands on, one creates the missing
 * endpoints, one inserts the new facts and one reinforces the existing ones.
 *
 * What is left to `writeFact` itself (answer null, written one by one after the batch, in
 * order): explicit contradictions, an EVIDENCE_LOST fact coming back, a new fact of a
 * single-valued predicate that may have rivals (in the store or in the batch), and a fact a
 * concurrent writer inserted first. Once an assertion of a triple is left to `writeFact`, so
 * are the later ones of that triple, so order within a triple is kept.
 */
import type { Queryable } from '../../db/database.js';
import { MemgateError, keyUnavailable } from '../../errors.js';
import { ensurePlaceholders } from '../../kernel/store/entity-store.js';
import {
  type FactProbe,
  insertFactRows,
  reinforceFactRows,
  resolveFactProbes,
  singleValuedPredicates,
} from './store/fact-batch-store.js';
import type { FactReinforcement, FactWrite } from '../../kernel/store/fact-store.js';
import { findExistingObservationIds } from '../../kernel/store/observation-store.js';
import {
  type FactInput,
  type FactWriteContext,
  type FactWriteOutcome,
  type PreparedFact,
  historyUnchanged,
  missingCitations,
  newFactRow,
  prepareFact,
  reinforcementOf,
} from './fact-write.js';

export interface FactBatchItem {
  input: FactInput;
  ctx: FactWriteContext;
}

/** The outcome, the expected error, or null: write this one with `writeFact`, after the batch. */
export type FactBatchAnswer = { outcome: FactWriteOutcome } | { error: MemgateError } | null;

interface Pending {
  at: number;
  item: FactBatchItem;
  prepared: PreparedFact;
}

/** Writes `items` (strict mode off: the caller checks) in a number of statements independent of their count. */
export async function writeFactBatch(
  tx: Queryable,
  namespace: string,
  items: readonly FactBatchItem[],
  visibleScopes: string[] | null,
): Promise<FactBatchAnswer[]> {
  const answers: FactBatchAnswer[] = items.map(() => null);
  const pending = await preparedItems(tx, namespace, items, answers, visibleScopes);
  const single = await singleValuedPredicates(tx, namespace, [
    ...new Set(pending.map((p) => p.item.input.predicate)),
  ]);
  const groups = groupByTriple(pending, single);
  const fallen = new Set<string>();
  for (let round = 0; ; round += 1) {
    const heads: Pending[] = [];
    for (const [triple, list] of groups) {
      const head = list[round];
      if (head && !fallen.has(triple)) heads.push(head);
    }
    if (heads.length === 0) break;
    await writeRound(tx, namespace, heads, single, answers, visibleScopes, (p) =>
      fallen.add(tripleOf(p.item.input)),
    );
  }
  return answers;
}

/** Validity and citations of every item; answers what fails, returns the rest in order. */
async function preparedItems(
  tx: Queryable,
  namespace: string,
  items: readonly FactBatchItem[],
  answers: FactBatchAnswer[],
  visibleScopes: string[] | null,
): Promise<Pending[]> {
  const prepared: Pending[] = [];
  items.forEach((item, at) => {
    try {
      prepared.push({ at, item, prepared: prepareFact(namespace, item.input, item.ctx) });
    } catch (error) {
      if (!(error instanceof MemgateError)) throw error;
      answers[at] = { error };
    }
  });
  const cited = [...new Set(prepared.flatMap((p) => p.prepared.cited))];
  const known = cited.length
    ? await findExistingObservationIds(tx, namespace, cited, visibleScopes)
    : new Set<string>();
  return prepared.filter((p) => {
    const missing = p.prepared.contradicts.length === 0 ? missingCitations(p.prepared, known) : null;
    if (missing) answers[p.at] = { error: missing };
    return !missing;
  });
}

/**
 * Assertions of the same triple, in order, that the batch writes. Left to `writeFact` (and with
 * them every later assertion of their triple): explicit contradictions, facts another item
 * contradicts, and a single-valued subject/predicate asserted more than once in the batch (its
 * assertions may conflict with each other).
 */
function groupByTriple(pending: readonly Pending[], single: ReadonlySet<string>): Map<string, Pending[]> {
  const pairOf = (f: FactInput) => `${f.subject}\u0000${f.predicate}`;
  const perPair = new Map<string, number>();
  for (const p of pending) {
    if (single.has(p.item.input.predicate))
      perPair.set(pairOf(p.item.input), (perPair.get(pairOf(p.item.input)) ?? 0) + 1);
  }
  const contradicted = new Set(pending.flatMap((p) => p.prepared.contradicts));
  const groups = new Map<string, Pending[]>();
  const left = new Set<string>();
  for (const p of pending) {
    const triple = tripleOf(p.item.input);
    const alone =
      p.prepared.contradicts.length > 0 ||
      contradicted.has(p.prepared.id) ||
      (perPair.get(pairOf(p.item.input)) ?? 0) > 1;
    if (alone) left.add(triple);
    if (left.has(triple)) continue;
    const list = groups.get(triple);
    if (list) list.push(p);
    else groups.set(triple, [p]);
  }
  return groups;
}

function tripleOf(f: FactInput): string {
  return `${f.subject}\u0000${f.predicate}\u0000${f.object}`;
}

/** One round: resolve, create endpoints, insert, reinforce; `leave` marks a triple for `writeFact`. */
async function writeRound(
  tx: Queryable,
  namespace: string,
  heads: readonly Pending[],
  single: ReadonlySet<string>,
  answers: FactBatchAnswer[],
  visibleScopes: string[] | null,
  leave: (p: Pending) => void,
): Promise<void> {
  const probes: FactProbe[] = heads.map(({ item, prepared }) => ({
    factId: prepared.id,
    subject: item.input.subject,
    predicate: item.input.predicate,
    object: item.input.object,
    validFrom: prepared.validFrom,
    validTo: prepared.validTo,
    bySameTriple: !item.input.validFrom,
    singleValued: single.has(item.input.predicate),
  }));
  const resolved = await resolveFactProbes(tx, namespace, probes, visibleScopes);
  const creates: { p: Pending; row: FactWrite }[] = [];
  const reinforcements: (FactReinforcement & { factId: string })[] = [];
  heads.forEach((p, n) => {
    const { match, idTaken, hiddenEndpoint, mayRival } = resolved[n]!;
    if (match?.status === 'SUPERSEDED' || match?.status === 'RETRACTED') {
      answers[p.at] = { outcome: historyUnchanged(match) };
    } else if (match?.status === 'ACTIVE') {
      reinforcements.push({
        factId: match.factId,
        ...reinforcementOf(match, p.item.input, p.prepared, p.item.ctx),
      });
      answers[p.at] = {
        outcome: { status: 'REINFORCED', factId: match.factId, conflictsWith: [], message: null },
      };
    } else if (match) {
      leave(p);
    } else if (hiddenEndpoint || idTaken) {
      answers[p.at] = { error: keyUnavailable() };
    } else if (probes[n]!.singleValued && mayRival) {
      leave(p);
    } else {
      creates.push({ p, row: newFactRow(p.item.input, p.prepared, p.item.ctx) });
    }
  });
  const endpoints = [...new Set(creates.flatMap(({ row }) => [row.subject, row.object]))];
  // Endpoints were checked visible by the resolution above; a hidden one now is a concurrent change.
  if ((await ensurePlaceholders(tx, namespace, endpoints, visibleScopes)) > 0) {
    throw new Error('an endpoint became hidden during the batch');
  }
  const inserted = await insertFactRows(
    tx,
    namespace,
    creates.map((c) => c.row),
  );
  for (const { p, row } of creates) {
    if (inserted.has(row.factId)) {
      answers[p.at] = {
        outcome: { status: 'CREATED', factId: row.factId, conflictsWith: [], message: null },
      };
    } else leave(p);
  }
  await reinforceFactRows(tx, namespace, reinforcements, visibleScopes);
}
