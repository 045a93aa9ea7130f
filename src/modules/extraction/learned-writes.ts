/**
 * What rules and models read from text, written through the ordinary fact path: names resolved
 * against the gazetteer (unknown ones become placeholders of the expected kind, scoped like
 * their source), facts by `writeFactBatch` with deterministic ids (a repeat reinforces, an
 * ASSERTED fact keeps its class, a rival of a single-valued predicate is flagged as a conflict,
 * never resolved), each citing the observation it was read from and scoped like it, so no
 * learned fact is more visible than its evidence. Attribute values only fill attributes the
 * entity does not have.
 */
import { withSavepoint } from '../../kernel/batch.js';
import type { Queryable } from '../../db/database.js';
import type { EvidenceClass } from '../../domain/evidence.js';
import { MemgateError } from '../../errors.js';
import { type FactInput, type FactWriteContext, writeFact, writeFactBatch } from '../facts/index.js';
import { type NameWanted, nameId, probesFor, resolveNames } from './resolution.js';
import {
  type PlaceholderWrite,
  fillMissingAttributes,
  findNamedEntities,
  insertNamedPlaceholders,
} from './store/gazetteer-store.js';

/** Where a statement was read: an observation (cited) or a document section (by path). */
export interface LearnedSource {
  observationId: string | null;
  scopes: string[];
  visibility: string[];
  occurredAt: Date;
  sourcePath: string | null;
}

export interface LearnedStatement {
  source: LearnedSource;
  subject: NameWanted;
  /** A relation (with object) or an attribute (with value). */
  predicate: string | null;
  object: NameWanted | null;
  attribute: string | null;
  value: string | null;
  evidence: Extract<EvidenceClass, 'EXTRACTED' | 'INFERRED'>;
  confidence: number;
  /** How it was read (extractor and span, or model and message): kept on the fact. */
  how: Record<string, unknown>;
}

export interface LearnedOutcome {
  created: number;
  reinforced: number;
  attributes: number;
  /** Statements not written, with why (strict mode, a hidden endpoint, a bad value…). */
  skipped: { statement: number; reason: string }[];
  factIds: string[];
}

export interface LearnedWriteOptions {
  now: Date;
  visibleScopes: string[] | null;
  /** Strict mode: the relations the namespace's packs declare (others are skipped). */
  allowedPredicates: ReadonlySet<string> | null;
  /** Attributes whose values are names (from the packs' alias templates). */
  aliasAttributes: readonly string[];
  onUnexpected: (error: unknown) => void;
}

export async function writeLearned(
  tx: Queryable,
  ns: string,
  statements: readonly LearnedStatement[],
  options: LearnedWriteOptions,
): Promise<LearnedOutcome> {
  const outcome: LearnedOutcome = { created: 0, reinforced: 0, attributes: 0, skipped: [], factIds: [] };
  if (statements.length === 0) return outcome;
  const wanted = statements.flatMap((s) => (s.object ? [s.subject, s.object] : [s.subject]));
  const hits = await findNamedEntities(
    tx,
    ns,
    probesFor(wanted),
    options.visibleScopes,
    options.aliasAttributes,
  );
  const resolved = resolveNames(wanted, hits);
  const keyOf = (w: NameWanted) => resolved.get(nameId(w))!.key;
  await insertNamedPlaceholders(tx, ns, placeholdersOf(statements, resolved));

  const facts: { at: number; input: FactInput; ctx: FactWriteContext }[] = [];
  const attributes: { key: string; attribute: string; value: string }[] = [];
  statements.forEach((s, at) => {
    if (s.attribute !== null && s.value !== null) {
      attributes.push({ key: keyOf(s.subject), attribute: s.attribute, value: s.value });
      return;
    }
    if (!s.predicate || !s.object) return;
    const subject = keyOf(s.subject);
    const object = keyOf(s.object);
    if (subject === object)
      outcome.skipped.push({ statement: at, reason: 'subject and object are the same entity' });
    else if (options.allowedPredicates && !options.allowedPredicates.has(s.predicate))
      outcome.skipped.push({
        statement: at,
        reason: `strict mode: relation "${s.predicate}" is not declared`,
      });
    else facts.push({ at, ...factOf(s, subject, object, options) });
  });
  await writeFacts(tx, ns, mergeRepeats(facts), options, outcome);
  outcome.attributes = await fillMissingAttributes(tx, ns, attributes, options.visibleScopes);
  return outcome;
}

function factOf(
  s: LearnedStatement,
  subject: string,
  object: string,
  options: LearnedWriteOptions,
): { input: FactInput; ctx: FactWriteContext } {
  return {
    input: {
      subject,
      predicate: s.predicate!,
      object,
      evidence: s.evidence,
      confidence: s.confidence,
      sourcePath: s.source.sourcePath,
      attributes: { learned: s.how },
    },
    ctx: {
      now: options.now,
      defaultValidFrom: s.source.occurredAt,
      observationId: s.source.observationId,
      defaultScopes: s.source.scopes,
      visibleScopes: options.visibleScopes,
    },
  };
}

/**
 * One item per fact and scope set: a statement read from several texts of the batch is written
 * once, citing all of them (earliest first, the highest confidence). Repeats of a single-valued
 * relation would otherwise each take the one-by-one path of the fact writer, looking like rivals.
 */
function mergeRepeats(
  facts: readonly { at: number; input: FactInput; ctx: FactWriteContext }[],
): { at: number; input: FactInput; ctx: FactWriteContext }[] {
  const byKey = new Map<string, { at: number; input: FactInput; ctx: FactWriteContext }>();
  const sorted = [...facts].sort(
    (a, b) => a.ctx.defaultValidFrom.getTime() - b.ctx.defaultValidFrom.getTime(),
  );
  for (const f of sorted) {
    const key = [f.input.subject, f.input.predicate, f.input.object, ...f.ctx.defaultScopes].join('\u0000');
    const first = byKey.get(key);
    if (!first) {
      byKey.set(key, { ...f, input: { ...f.input } });
      continue;
    }
    const cited = f.ctx.observationId;
    if (cited && cited !== first.ctx.observationId && !first.input.observationIds?.includes(cited)) {
      first.input.observationIds = [...(first.input.observationIds ?? []), cited];
    }
    first.input.confidence = Math.max(first.input.confidence ?? 0, f.input.confidence ?? 0);
  }
  return [...byKey.values()];
}

/** The batch write; what it leaves goes through `writeFact` one by one under a savepoint. */
async function writeFacts(
  tx: Queryable,
  ns: string,
  facts: readonly { at: number; input: FactInput; ctx: FactWriteContext }[],
  options: LearnedWriteOptions,
  outcome: LearnedOutcome,
): Promise<void> {
  const answers = await writeFactBatch(tx, ns, facts, options.visibleScopes);
  const count = (status: string, factId: string) => {
    if (status === 'CREATED') outcome.created += 1;
    else if (status === 'REINFORCED') outcome.reinforced += 1;
    outcome.factIds.push(factId);
  };
  for (const [n, item] of facts.entries()) {
    const answer = answers[n];
    if (answer && 'outcome' in answer) {
      count(answer.outcome.status, answer.outcome.factId);
      continue;
    }
    if (answer && 'error' in answer) {
      outcome.skipped.push({ statement: item.at, reason: `${answer.error.code}: ${answer.error.message}` });
      continue;
    }
    try {
      const one = await withSavepoint(tx, 'learned_fact', (q) => writeFact(q, ns, item.input, item.ctx));
      count(one.status, one.factId);
    } catch (error) {
      if (!(error instanceof MemgateError)) options.onUnexpected(error);
      const reason =
        error instanceof MemgateError ? `${error.code}: ${error.message}` : 'could not be written';
      outcome.skipped.push({ statement: item.at, reason });
    }
  }
}

/** Placeholders for the names nothing matched, scoped like the first statement naming them. */
function placeholdersOf(
  statements: readonly LearnedStatement[],
  resolved: ReadonlyMap<string, { key: string; kind: string; created: boolean }>,
): PlaceholderWrite[] {
  const rows = new Map<string, PlaceholderWrite>();
  for (const s of statements) {
    for (const w of s.object ? [s.subject, s.object] : [s.subject]) {
      const r = resolved.get(nameId(w))!;
      if (!r.created || rows.has(r.key)) continue;
      rows.set(r.key, {
        key: r.key,
        kind: r.kind,
        title: w.name,
        scopes: s.source.scopes,
        visibility: s.source.visibility,
        observationId: s.source.observationId,
      });
    }
  }
  return [...rows.values()];
}
