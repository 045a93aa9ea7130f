import { z } from 'zod';
import type { Queryable } from '../../db/database.js';
import { EVIDENCE_CLASSES, type FactSupport, reinforce } from '../../domain/evidence.js';
import { factId as computeFactId } from '../../domain/ids.js';
import { type MemgateError, badInput, keyUnavailable, notFound } from '../../errors.js';
import { ensurePlaceholders, mergeAttributes } from '../../kernel/store/entity-store.js';
import {
  type EvidenceClass,
  type FactReinforcement,
  type FactRow,
  type FactWrite,
  existingFactIds,
  findFactForAssertion,
  findOverlappingRivals,
  insertFact,
  isSingleValued,
  lockFact,
  markConflicts,
  reinforceFact,
} from '../../kernel/store/fact-store.js';
import { findExistingObservationIds } from '../../kernel/store/observation-store.js';
import type { SchemaPolicy } from '../domain-packs/index.js';
import {
  confidenceSchema,
  jsonObjectSchema,
  keySchema,
  scopesSchema,
  predicateSchema,
  visibilityScopes,
} from '../../kernel/validation.js';

const factIdSchema = z.string().regex(/^fact-[0-9a-f]{24}$/, 'a fact id looks like fact-<24 hex>');

export const factInputSchema = z
  .object({
    subject: keySchema,
    predicate: predicateSchema,
    object: keySchema,
    validFrom: z.date().nullish(),
    validTo: z.date().nullish(),
    evidence: z.enum(EVIDENCE_CLASSES).nullish(),
    confidence: confidenceSchema.nullish(),
    observationIds: z.array(z.string().min(1).max(128)).max(1000, 'at most 1000 observation ids').nullish(),
    sourcePath: z.string().max(2048).nullish(),
    scopes: scopesSchema.nullish(),
    attributes: jsonObjectSchema.nullish(),
  })
  .superRefine((f, ctx) => {
    if (f.validFrom && f.validTo && f.validTo.getTime() <= f.validFrom.getTime()) {
      ctx.addIssue({ code: 'custom', path: ['validTo'], message: 'validTo must be after validFrom' });
    }
    const contradicts = f.attributes?.contradicts;
    if (contradicts !== undefined && contradicts !== null) {
      const list = Array.isArray(contradicts) ? contradicts : [contradicts];
      if (list.length > 50 || !list.every((id) => factIdSchema.safeParse(id).success)) {
        ctx.addIssue({
          code: 'custom',
          path: ['attributes', 'contradicts'],
          message: 'contradicts must be a fact id (or a list of at most 50) such as fact-<24 hex>',
        });
      }
    }
  });
export type FactInput = z.infer<typeof factInputSchema>;

/** Where a fact write happens: an explicit call (`assertFacts`) or an observation's projection. */
export interface FactWriteContext {
  now: Date;
  /** validFrom when the input has none: now for assertFacts, occurredAt for observations. */
  defaultValidFrom: Date;
  /** The observation asserting the fact, appended to its evidence. */
  observationId: string | null;
  /** Scopes when the input has none (an observation's facts inherit its scopes). */
  defaultScopes: string[];
  /** Set by supersedeFact: the fact this one replaces. */
  supersedes?: string | null;
  /** Strict-mode checks of the namespace's domain packs (absent: not checked here). */
  policy?: SchemaPolicy | null;
  /** The writer's visibility scopes (null: all): only rows it can see are found or changed. */
  visibleScopes: string[] | null;
}

export interface FactWriteOutcome {
  status: 'CREATED' | 'REINFORCED' | 'UNCHANGED';
  factId: string;
  /** Facts this one is now marked as conflicting with (new marks only). */
  conflictsWith: string[];
  message: string | null;
}

/** Explicit contradictions: `attributes.contradicts` names one fact id or a list of them. */
export function contradictedFactIds(attributes: Record<string, unknown> | null | undefined): string[] {
  const value = attributes?.contradicts;
  if (value === undefined || value === null) return [];
  return [...new Set((Array.isArray(value) ? value : [value]).map(String))].sort();
}

/**
 * Creates or reinforces one fact inside the caller's transaction (SQL through the fact store).
 *
 * - Identity: `fact-` + sha256(ns|s|p|o|validFrom). With an explicit validFrom the id decides;
 *   without one, an ACTIVE fact with the same s/p/o still in force at the default instant is
 *   the same fact (so a retried call or a later observation reinforces instead of adding an edge).
 * - Reinforcement appends the observation ids (once), raises confidence to the max, keeps the
 *   stronger evidence class, unions scopes and merges attributes; an EVIDENCE_LOST fact becomes
 *   ACTIVE again. SUPERSEDED and RETRACTED facts are history: re-asserting them changes nothing.
 * - Conflicts: an ACTIVE rival (same subject and predicate, other object, overlapping half-open
 *   validity) of a single-valued predicate, or a fact named in `attributes.contradicts`, is
 *   marked on both sides (conflict = true, conflictsWith lists the other). Both are kept.
 */
export async function writeFact(
  tx: Queryable,
  namespace: string,
  input: FactInput,
  ctx: FactWriteContext,
): Promise<FactWriteOutcome> {
  const prepared = prepareFact(namespace, input, ctx);
  await ctx.policy?.assertFact(tx, namespace, input);
  const { id, contradicts, validFrom, validTo } = prepared;
  if (contradicts.includes(id)) throw badInput('A fact cannot contradict itself.');
  const visibleScopes = ctx.visibleScopes;
  if (contradicts.length > 0) {
    const known = await existingFactIds(tx, namespace, contradicts, visibleScopes);
    const missing = contradicts.filter((c) => !known.has(c));
    if (missing.length > 0) throw notFound(`contradicts names unknown facts: ${missing.join(', ')}`);
  }
  // Evidence the caller names must be an observation it can see (hidden reads as absent).
  if (prepared.cited.length > 0) {
    const known = await findExistingObservationIds(tx, namespace, prepared.cited, visibleScopes);
    const missing = missingCitations(prepared, known);
    if (missing) throw missing;
  }

  let existing = await findFactForAssertion(
    tx,
    namespace,
    id,
    input.validFrom
      ? null
      : { subject: input.subject, predicate: input.predicate, object: input.object, inForceAt: validFrom },
    visibleScopes,
  );
  let created = false;
  if (!existing) {
    const hidden = await ensurePlaceholders(
      tx,
      namespace,
      [...new Set([input.subject, input.object])],
      visibleScopes,
    );
    if (hidden > 0) throw keyUnavailable();
    created = await insertFact(tx, namespace, newFactRow(input, prepared, ctx));
    // A concurrent writer created the same fact first: this assertion reinforces theirs,
    // unless the fact with this id is one the caller cannot see.
    if (!created) existing = await lockFact(tx, namespace, id, visibleScopes);
    if (!created && !existing) throw keyUnavailable();
  }
  if (existing && (existing.status === 'SUPERSEDED' || existing.status === 'RETRACTED')) {
    return historyUnchanged(existing);
  }
  let becameActive = created;
  if (existing) {
    becameActive = existing.status === 'EVIDENCE_LOST';
    await reinforceFact(
      tx,
      namespace,
      existing.factId,
      reinforcementOf(existing, input, prepared, ctx),
      visibleScopes,
    );
  }
  const target = existing ?? {
    factId: id,
    subject: input.subject,
    predicate: input.predicate,
    object: input.object,
    validFrom,
    validTo,
  };
  const marked = new Set<string>();
  if (becameActive) {
    const rivals = await findOverlappingRivals(tx, namespace, target, visibleScopes);
    if (rivals.length > 0 && (await isSingleValued(tx, namespace, input.predicate))) {
      for (const r of rivals) marked.add(r);
    }
  }
  const explicit = contradicts.filter((c) => !existing?.conflictsWith.includes(c));
  for (const c of explicit) marked.add(c);
  const conflictsWith = [...marked].sort();
  await markConflicts(tx, namespace, target.factId, conflictsWith, visibleScopes);
  return {
    status: existing ? 'REINFORCED' : 'CREATED',
    factId: target.factId,
    conflictsWith,
    message: conflictsWith.length > 0 ? `conflicts with ${conflictsWith.join(', ')}` : null,
  };
}

/** What a fact write derives from its input alone: identity, defaults, validity. */
export interface PreparedFact {
  id: string;
  validFrom: Date;
  validTo: Date | null;
  contradicts: string[];
  /** Observation ids the input cites (each must be a visible observation). */
  cited: string[];
  evidence: EvidenceClass;
  confidence: number;
  /** Cited ones plus the asserting observation. */
  observationIds: string[];
  scopes: string[];
}

/** The pure part of a fact write (the one-row and the batch path share it); throws on bad validity. */
export function prepareFact(namespace: string, input: FactInput, ctx: FactWriteContext): PreparedFact {
  const validFrom = input.validFrom ?? ctx.defaultValidFrom;
  const validTo = input.validTo ?? null;
  if (validTo && validTo.getTime() <= validFrom.getTime()) {
    throw badInput(
      `validTo (${validTo.toISOString()}) must be after validFrom (${validFrom.toISOString()}).`,
    );
  }
  return {
    id: computeFactId(namespace, input.subject, input.predicate, input.object, validFrom),
    validFrom,
    validTo,
    contradicts: contradictedFactIds(input.attributes),
    cited: [...new Set(input.observationIds ?? [])],
    evidence: input.evidence ?? 'ASSERTED',
    confidence: input.confidence ?? 1,
    observationIds: [
      ...new Set([...(input.observationIds ?? []), ...(ctx.observationId ? [ctx.observationId] : [])]),
    ],
    scopes: [...new Set(input.scopes ?? ctx.defaultScopes)].sort(),
  };
}

/** NOT_FOUND naming the cited observations that are not among `known`; null when all are. */
export function missingCitations(prepared: PreparedFact, known: ReadonlySet<string>): MemgateError | null {
  const missing = prepared.cited.filter((c) => !known.has(c));
  return missing.length > 0
    ? notFound(`observationIds names unknown observations: ${missing.slice(0, 20).join(', ')}`)
    : null;
}

/**
 * What re-asserting an existing fact changes: the observation ids join its evidence (once),
 * confidence rises to the max, the stronger class stays, scopes union, attributes merge.
 */
export function reinforcementOf(
  existing: Pick<FactRow, 'observationIds' | 'confidence' | 'evidence' | 'scopes' | 'attributes'>,
  input: FactInput,
  prepared: PreparedFact,
  ctx: FactWriteContext,
): FactReinforcement {
  const { confidence, evidence } = prepared;
  let support: FactSupport = {
    observationIds: existing.observationIds,
    confidence: existing.confidence,
    evidence: existing.evidence,
  };
  support = reinforce(support, { confidence, evidence });
  for (const obs of prepared.observationIds)
    support = reinforce(support, { observationId: obs, confidence, evidence });
  const mergedScopes = [...new Set([...existing.scopes, ...prepared.scopes])].sort();
  return {
    observationIds: [...support.observationIds],
    confidence: support.confidence,
    evidence: support.evidence,
    scopes: mergedScopes,
    visibility: visibilityScopes(mergedScopes),
    attributes: mergeAttributes(existing.attributes, input.attributes ?? null),
    sourcePath: input.sourcePath ?? null,
    supersedes: ctx.supersedes ?? null,
    status: 'ACTIVE',
  };
}

/** The row a new fact is stored as. */
export function newFactRow(input: FactInput, prepared: PreparedFact, ctx: FactWriteContext): FactWrite {
  return {
    factId: prepared.id,
    subject: input.subject,
    predicate: input.predicate,
    object: input.object,
    validFrom: prepared.validFrom,
    validTo: prepared.validTo,
    recordedAt: ctx.now,
    evidence: prepared.evidence,
    confidence: prepared.confidence,
    observationIds: prepared.observationIds,
    sourcePath: input.sourcePath ?? null,
    scopes: prepared.scopes,
    visibility: visibilityScopes(prepared.scopes),
    attributes: input.attributes ?? {},
    supersedes: ctx.supersedes ?? null,
  };
}

/** Re-asserting a SUPERSEDED or RETRACTED fact: history is not reopened. */
export function historyUnchanged(existing: Pick<FactRow, 'factId' | 'status'>): FactWriteOutcome {
  return {
    status: 'UNCHANGED',
    factId: existing.factId,
    conflictsWith: [],
    message: `fact ${existing.factId} is ${existing.status}; history is not reopened (assert it with another validFrom to state it again)`,
  };
}
