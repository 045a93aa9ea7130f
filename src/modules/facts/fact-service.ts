import { z } from 'zod';
import { assertCanWrite, scopeAssignmentError } from '../../auth/principal.js';
import type { Queryable } from '../../db/database.js';
import { factId as computeFactId } from '../../domain/ids.js';
import { badInput, conflict, notFound, parseInput } from '../../errors.js';
import { globalId } from '../../global-id.js';
import {
  closeSuperseded,
  dropConflictReferences,
  lockFact,
  retractFactRow,
} from '../../kernel/store/fact-store.js';
import { planWritesForAnyNamespace } from '../../kernel/store/write-plans.js';
import {
  type WritePayload,
  type WriteResult,
  rejected,
  rejectionFor,
  toPayload,
  writeEach,
  writeItems,
  writeSetBased,
} from '../../kernel/batch.js';
import { writeFactBatch } from './fact-batch.js';
import { MAX_BATCH } from '../entities/index.js';
import type { RequestScope } from '../../kernel/request-scope.js';
import { schemaPolicyFor } from '../domain-packs/index.js';
import { namespaceSchema } from '../../kernel/validation.js';

import { type FactInput, type FactWriteContext, factInputSchema, writeFact } from './fact-write.js';

export class FactService {
  constructor(private readonly scope: RequestScope) {}

  async assertFacts(namespace: string, inputs: unknown[]): Promise<WritePayload> {
    const ns = this.writableNamespace(namespace);
    if (inputs.length > MAX_BATCH) {
      return toPayload(
        inputs.map((_, i) => rejected(i, 'LIMIT_EXCEEDED', `A batch holds at most ${MAX_BATCH} items.`)),
      );
    }
    const results: WriteResult[] = [];
    const valid: { index: number; value: FactInput }[] = [];
    inputs.forEach((raw, index) => {
      const parsed = factInputSchema.safeParse(raw);
      if (!parsed.success) {
        results.push(rejected(index, 'BAD_USER_INPUT', describe(parsed.error)));
        return;
      }
      const refused = scopeAssignmentError(this.scope.principal, parsed.data.scopes);
      if (refused) results.push(rejected(index, refused.code, refused.message));
      else valid.push({ index, value: parsed.data });
    });
    const now = new Date();
    const policy = schemaPolicyFor(this.scope);
    const ctx: FactWriteContext = {
      now,
      defaultValidFrom: now,
      observationId: null,
      defaultScopes: [],
      policy,
      visibleScopes: this.visibleScopes(),
    };
    const one = async (tx: Queryable, input: FactInput, index: number) => {
      const outcome = await writeFact(tx, ns, input, ctx);
      return this.result(ns, index, outcome.status, outcome.factId, outcome.message);
    };
    const onUnexpected = (error: unknown) => this.logUnexpected('assertFacts', error);
    const written = valid.length
      ? await this.scope.db.transaction('assertFacts', async (tx) => {
          await planWritesForAnyNamespace(tx);
          // Strict mode checks each fact against its endpoints' kinds: one by one.
          if ((await policy.schemaFor(tx, ns)).strict) return writeItems(tx, valid, one, onUnexpected);
          return writeSetBased(
            tx,
            valid,
            async (q, items) => {
              const answers = await writeFactBatch(
                q,
                ns,
                items.map((i) => ({ input: i.value, ctx })),
                ctx.visibleScopes,
              );
              return items.map(({ index }, n) => {
                const answer = answers[n];
                if (!answer) return null;
                if ('error' in answer) return rejectionFor(index, answer.error, onUnexpected);
                const o = answer.outcome;
                return this.result(ns, index, o.status, o.factId, o.message);
              });
            },
            one,
            onUnexpected,
          );
        })
      : [];
    return toPayload([...results, ...written]);
  }

  /**
   * Replaces an ACTIVE fact: the old one is closed at the new validFrom (default now), marked
   * SUPERSEDED and linked both ways; nothing is deleted. Repeating the same supersession is
   * UNCHANGED; superseding a fact that is no longer ACTIVE otherwise is a CONFLICT.
   */
  async supersedeFact(namespace: string, factId: string, by: unknown): Promise<WritePayload> {
    const ns = this.writableNamespace(namespace);
    const parsed = factInputSchema.safeParse(by);
    if (!parsed.success) return toPayload([rejected(0, 'BAD_USER_INPUT', describe(parsed.error), factId)]);
    const refused = scopeAssignmentError(this.scope.principal, parsed.data.scopes);
    if (refused) return toPayload([rejected(0, refused.code, refused.message, factId)]);
    const input = parsed.data;
    const now = new Date();
    const written = await writeEach(
      this.scope.db,
      'supersedeFact',
      [{ index: 0, value: input }],
      async (tx, value, index) => {
        const old = await lockFact(tx, ns, factId, this.visibleScopes());
        if (!old) throw notFound(`No fact ${JSON.stringify(factId.slice(0, 80))} in namespace "${ns}".`);
        const validFrom = value.validFrom ?? now;
        const successorId = computeFactId(ns, value.subject, value.predicate, value.object, validFrom);
        if (old.status !== 'ACTIVE') {
          if (old.supersededBy === successorId) {
            return this.result(
              ns,
              index,
              'UNCHANGED',
              successorId,
              `${old.factId} is already superseded by it`,
            );
          }
          throw conflict(`Fact ${old.factId} is ${old.status}; only an ACTIVE fact can be superseded.`);
        }
        if (successorId === old.factId)
          throw badInput('The replacement is the same fact (same s/p/o and validFrom).');
        if (validFrom.getTime() < old.validFrom.getTime()) {
          throw badInput(
            `The replacement's validFrom (${validFrom.toISOString()}) is before the old fact's (${old.validFrom.toISOString()}).`,
          );
        }
        await closeSuperseded(tx, ns, old.factId, validFrom, successorId);
        const outcome = await writeFact(
          tx,
          ns,
          { ...value, validFrom },
          {
            now,
            defaultValidFrom: validFrom,
            observationId: null,
            defaultScopes: old.scopes,
            supersedes: old.factId,
            policy: schemaPolicyFor(this.scope),
            visibleScopes: this.visibleScopes(),
          },
        );
        const note = `supersedes ${old.factId}${outcome.message ? `; ${outcome.message}` : ''}`;
        return this.result(ns, index, outcome.status, outcome.factId, note);
      },
      (error) => this.logUnexpected('supersedeFact', error),
    );
    // The closed predecessor changed too.
    return toPayload(written);
  }

  /** RETRACTED with the reason; an open validity ends now. Retracting again is UNCHANGED. */
  async retractFact(namespace: string, factId: string, reason: string): Promise<WritePayload> {
    const ns = this.writableNamespace(namespace);
    const why = parseInput(reasonSchema, reason, 'reason');
    const now = new Date();
    const written = await writeEach(
      this.scope.db,
      'retractFact',
      [{ index: 0, value: factId }],
      async (tx, id, index) => {
        const fact = await lockFact(tx, ns, id, this.visibleScopes());
        if (!fact) throw notFound(`No fact ${JSON.stringify(id.slice(0, 80))} in namespace "${ns}".`);
        if (fact.status === 'RETRACTED') return this.result(ns, index, 'UNCHANGED', id, 'already retracted');
        await retractFactRow(tx, ns, id, why, now);
        // A retraction resolves the conflicts this fact took part in.
        await dropConflictReferences(tx, ns, [id], this.visibleScopes());
        return this.result(ns, index, 'UPDATED', id, null);
      },
      (error) => this.logUnexpected('retractFact', error),
    );
    return toPayload(written);
  }

  private visibleScopes(): string[] | null {
    return this.scope.principal.scopes;
  }

  private writableNamespace(namespace: string): string {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    assertCanWrite(this.scope.principal, ns);
    return ns;
  }

  private result(
    ns: string,
    index: number,
    status: WriteResult['status'],
    factId: string,
    message: string | null,
  ): WriteResult {
    return { index, status, id: globalId('Fact', ns, factId), key: factId, message };
  }

  private logUnexpected(what: string, error: unknown): void {
    this.scope.deps.logger.error(`${what} item failed`, { error: String(error) });
  }
}

export const reasonSchema = z
  .string()
  .trim()
  .min(1, 'a reason is required')
  .max(2000, 'reason is at most 2000 characters');

export function describe(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; ');
}
