/**
 * The projection of many observations' assertions at once (strict mode off, no episodes): every
 * entity assertion of the batch goes through one set-based entity upsert, every fact assertion
 * through one set-based fact write, and each observation gets the outcome `projectAssertions`
 * would have given it. Entities are written before facts; for the rows that makes no
 * difference (a fact's missing endpoint would be a placeholder the entity then fills in).
 *
 * What the set-based writes leave (a key lost to a concurrent writer, a fact for `writeFact`)
 * is applied afterwards, one assertion at a time under its own savepoint, as before.
 */
import type { Queryable } from '../../db/database.js';
import { keyUnavailable } from '../../errors.js';
import { withSavepoint } from '../../kernel/batch.js';
import type { MentionRole } from '../../kernel/store/mention-store.js';
import { upsertEntityBatch } from '../entities/index.js';
import { writeFactBatch } from '../facts/index.js';
import {
  type AssertionRejection,
  type ParsedAssertion,
  type ProjectionContext,
  type ProjectionOutcome,
  applyAssertion,
  assertedEntity,
  assertedFact,
  assertionRejection,
  projectionOutcome,
} from './projection.js';

export interface BatchProjection {
  ctx: ProjectionContext;
  assertions: readonly ParsedAssertion[];
}

interface Ledger {
  rejected: AssertionRejection[];
  touched: [string, MentionRole][];
}

type Applicable = Extract<ParsedAssertion, { ok: true }>;

/** One outcome per observation, in the order given. */
export async function projectAssertionBatch(
  tx: Queryable,
  namespace: string,
  observations: readonly BatchProjection[],
  visibleScopes: string[] | null,
): Promise<ProjectionOutcome[]> {
  const ledgers: Ledger[] = observations.map(() => ({ rejected: [], touched: [] }));
  const entities: { o: number; index: number; a: Extract<Applicable, { kind: 'entity' }> }[] = [];
  const facts: { o: number; index: number; a: Extract<Applicable, { kind: 'fact' }> }[] = [];
  observations.forEach(({ assertions }, o) => {
    assertions.forEach((a, index) => {
      if (!a.ok) ledgers[o]!.rejected.push({ index, kind: a.kind, code: a.code, message: a.message });
      else if (a.kind === 'entity') entities.push({ o, index, a });
      else if (a.kind === 'fact') facts.push({ o, index, a });
      else throw new Error('episode assertions are projected one observation at a time');
    });
  });
  const alone: { o: number; index: number; a: Applicable }[] = [];

  const statuses = await upsertEntityBatch(
    tx,
    namespace,
    entities.map(({ o, a }) => assertedEntity(observations[o]!.ctx, a.value)),
    visibleScopes,
  );
  entities.forEach((item, n) => {
    const ledger = ledgers[item.o]!;
    const status = statuses[n]!;
    if (status === 'RETRY') alone.push(item);
    else if (status === 'HIDDEN') ledger.rejected.push(rejection(item.index, 'entity', keyUnavailable()));
    else ledger.touched.push([item.a.value.key, 'entity']);
  });

  const answers = await writeFactBatch(
    tx,
    namespace,
    facts.map(({ o, a }) => assertedFact(observations[o]!.ctx, a.value)),
    visibleScopes,
  );
  facts.forEach((item, n) => {
    const ledger = ledgers[item.o]!;
    const answer = answers[n];
    if (!answer) alone.push(item);
    else if ('error' in answer) ledger.rejected.push(rejection(item.index, 'fact', answer.error));
    else ledger.touched.push([item.a.value.subject, 'fact'], [item.a.value.object, 'fact']);
  });

  for (const { o, index, a } of alone) {
    const ctx = observations[o]!.ctx;
    try {
      ledgers[o]!.touched.push(
        ...(await withSavepoint(tx, 'assertion', (q) => applyAssertion(q, ctx, index, a))),
      );
    } catch (error) {
      ledgers[o]!.rejected.push(assertionRejection(index, a.kind, error, ctx.onUnexpected));
    }
  }
  return observations.map(({ ctx, assertions }, o) =>
    projectionOutcome(ctx.observationId, assertions, ledgers[o]!.rejected, ledgers[o]!.touched),
  );
}

function rejection(
  index: number,
  kind: string,
  error: { code: string; message: string },
): AssertionRejection {
  return { index, kind, code: error.code, message: error.message };
}
