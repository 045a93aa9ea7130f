import { indexObservationContext } from '../../kernel/store/context-index-store.js';
import { assertCanWrite } from '../../auth/principal.js';
import { keyUnavailable, notFound, parseInput } from '../../errors.js';
import { globalId } from '../../global-id.js';
import { appendAudit } from '../../kernel/store/audit-store.js';
import {
  deleteFactsOfEntity,
  dropConflictReferences,
  removeObservationEvidence,
} from '../../kernel/store/fact-store.js';
import { deleteMentionsOfEntity } from '../../kernel/store/mention-store.js';
import {
  deleteChunksOfObservation,
  lockObservation,
  redactObservationRow,
} from '../../kernel/store/observation-store.js';
import { deleteEntityRows, hiddenDependents, lockVisibleEntity } from './store/purge-store.js';
import { type WritePayload, toPayload, writeEach } from '../../kernel/batch.js';
import { reasonSchema } from '../facts/index.js';
import { dropSummariesResting } from '../summaries/index.js';
import type { RequestScope } from '../../kernel/request-scope.js';
import { keySchema, namespaceSchema } from '../../kernel/validation.js';

const observationIdSchema = keySchema;

/**
 * Removal with a trail: redaction keeps the observation row (status REDACTED, content and data
 * replaced) and takes it out of every fact's evidence; purge deletes an entity with its
 * versions, chunks, facts and mentions. Each writes an audit_log row (append-only by trigger,
 * and no API path updates or deletes it) summarising what went — never the content itself.
 * Both address only what the caller can see: a hidden target is NOT_FOUND like an absent one,
 * and a target that hidden rows depend on is refused with KEY_UNAVAILABLE (hidden rows never
 * change; a principal who sees them all can do it).
 */
export class PurgeService {
  constructor(private readonly scope: RequestScope) {}

  async redactObservation(namespace: string, observationId: string, reason: string): Promise<WritePayload> {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    assertCanWrite(this.scope.principal, ns);
    const id = parseInput(observationIdSchema, observationId, 'observationId');
    const why = parseInput(reasonSchema, reason, 'reason');
    const written = await writeEach(
      this.scope.db,
      'redactObservation',
      [{ index: 0, value: id }],
      async (tx, obsId, index) => {
        const visibleScopes = this.scope.principal.scopes;
        const current = await lockObservation(tx, ns, obsId, visibleScopes);
        if (!current)
          throw notFound(`No observation ${JSON.stringify(obsId.slice(0, 80))} in namespace "${ns}".`);
        const result = { index, id: globalId('Observation', ns, obsId), key: obsId };
        if (current.status === 'REDACTED')
          return { ...result, status: 'UNCHANGED', message: 'already redacted' };
        if (await hiddenDependents(tx, ns, { observationId: obsId }, visibleScopes)) throw keyUnavailable();
        const before = (await redactObservationRow(tx, ns, obsId, why))!;
        const chunks = await deleteChunksOfObservation(tx, ns, obsId, visibleScopes);
        // Its words leave the neighbouring turns' index too.
        await indexObservationContext(tx, ns, [obsId]);
        const facts = await removeObservationEvidence(
          tx,
          ns,
          obsId,
          `evidence lost: observation ${obsId} redacted`,
          visibleScopes,
        );
        const summaries = await dropSummariesResting(tx, ns, { observations: [obsId], facts: facts.lost });
        await appendAudit(tx, ns, {
          principalId: this.scope.principal.id,
          action: 'redact_observation',
          target: obsId,
          summary: {
            reason: why,
            kind: before.kind,
            statusBefore: before.status,
            contentBytes: before.contentBytes,
            dataBytes: before.dataBytes,
            pii: before.pii,
            piiCategories: before.piiCategories,
            chunksDeleted: chunks,
            factsAffected: facts.affected,
            factsEvidenceLost: facts.lost,
            summariesDropped: summaries,
          },
        });
        return {
          ...result,
          status: 'UPDATED',
          message: `redacted; ${chunks} chunks deleted; ${facts.affected.length} facts lost this evidence, ${facts.lost.length} now EVIDENCE_LOST`,
        };
      },
      (error) => this.scope.deps.logger.error('redactObservation failed', { error: String(error) }),
    );
    return toPayload(written);
  }

  async purgeEntity(namespace: string, key: string, reason: string): Promise<WritePayload> {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    assertCanWrite(this.scope.principal, ns);
    const entityKey = parseInput(keySchema, key, 'key');
    const why = parseInput(reasonSchema, reason, 'reason');
    const written = await writeEach(
      this.scope.db,
      'purgeEntity',
      [{ index: 0, value: entityKey }],
      async (tx, k, index) => {
        const visibleScopes = this.scope.principal.scopes;
        const absent = () => notFound(`No entity ${JSON.stringify(k.slice(0, 80))} in namespace "${ns}".`);
        if (!(await lockVisibleEntity(tx, ns, k, visibleScopes))) throw absent();
        if (await hiddenDependents(tx, ns, { entityKey: k }, visibleScopes)) throw keyUnavailable();
        // Facts first: a fact is visible only while both its endpoints exist.
        const facts = await deleteFactsOfEntity(tx, ns, k, visibleScopes);
        await dropConflictReferences(tx, ns, facts, visibleScopes);
        const mentions = await deleteMentionsOfEntity(tx, ns, k);
        // Derived rows go with their sources: its own summaries, and others' that state its facts.
        await dropSummariesResting(tx, ns, { entities: [k], facts });
        const entity = await deleteEntityRows(tx, ns, k, visibleScopes);
        if (!entity) throw absent();
        const summary = {
          reason: why,
          kind: entity.kind,
          title: entity.title,
          placeholder: entity.placeholder,
          attributeVersions: entity.versions,
          chunks: entity.chunks,
          facts: facts.length,
          factIds: facts,
          mentions,
        };
        await appendAudit(tx, ns, {
          principalId: this.scope.principal.id,
          action: 'purge_entity',
          target: k,
          summary,
        });
        return {
          index,
          status: 'UPDATED',
          id: globalId('Entity', ns, k),
          key: k,
          message: `purged: ${entity.versions} attribute versions, ${entity.chunks} chunks, ${facts.length} facts, ${mentions} mentions`,
        };
      },
      (error) => this.scope.deps.logger.error('purgeEntity failed', { error: String(error) }),
    );
    return toPayload(written);
  }
}
