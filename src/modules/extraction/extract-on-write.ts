/**
 * The write paths' one call: after a batch's observations (or documents) are in, inside the same
 * transaction, domain-pack extractors read facts out of their text (evidence EXTRACTED) and,
 * when a model is configured, the texts are queued for model extraction (one statement). Both
 * are derived from the evidence: a failure of the rules costs the derivation (logged, rolled
 * back to a savepoint), never the batch.
 */
import { withSavepoint } from '../../kernel/batch.js';
import type { Queryable } from '../../db/database.js';
import type { NamespaceSchema } from '../../domain/domain-pack.js';
import type { RequestScope } from '../../kernel/request-scope.js';
import { llmFor } from '../../providers/llm.js';
import { schemaPolicyFor } from '../domain-packs/index.js';
import { type LearnedSource, type LearnedStatement, writeLearned } from './learned-writes.js';
import { aliasAttributesOf } from './resolution.js';
import { applyExtractors } from './rules.js';
import { readExtractionSettings } from './settings.js';
import { findExtractionSettings } from './store/extraction-settings-store.js';
import { type JobWrite, enqueueJobs } from './store/job-store.js';

/** What the observation write path hands over: the rows it just inserted. */
export interface WrittenObservation {
  observationId: string;
  content: string | null;
  scopes: string[];
  visibility: string[];
  occurredAt: Date;
  sessionId: string | null;
  provenance: unknown;
}

/** What the document write path hands over: the documents it created or changed. */
export interface WrittenDocument {
  key: string;
  content: string;
  scopes: string[];
  visibility: string[];
  sourcePath: string | null;
  /** The orders of its sections (chunks), each one model-extraction job. */
  sections: readonly number[];
}

interface TextToRead {
  text: string;
  source: LearnedSource;
}

export async function extractFromObservations(
  scope: RequestScope,
  tx: Queryable,
  ns: string,
  written: readonly WrittenObservation[],
): Promise<void> {
  const withText = written.filter((o) => (o.content ?? '').trim() !== '');
  if (withText.length === 0) return;
  await readByRules(
    scope,
    tx,
    ns,
    withText.map((o) => ({
      text: o.content!,
      source: {
        observationId: o.observationId,
        scopes: o.scopes,
        visibility: o.visibility,
        occurredAt: o.occurredAt,
        sourcePath: uriOf(o.provenance),
      },
    })),
  );
  await queueForModel(
    scope,
    tx,
    ns,
    withText.map((o) => ({
      jobId: `obs:${o.observationId}`,
      sourceKind: 'observation',
      sourceId: o.observationId,
      sourceOrd: 0,
      batchKey: o.sessionId ?? o.observationId,
      occurredAt: o.occurredAt,
    })),
  );
}

export async function extractFromDocuments(
  scope: RequestScope,
  tx: Queryable,
  ns: string,
  written: readonly WrittenDocument[],
): Promise<void> {
  if (written.length === 0) return;
  const now = new Date();
  await readByRules(
    scope,
    tx,
    ns,
    written.map((d) => ({
      text: d.content,
      source: {
        observationId: null,
        scopes: d.scopes,
        visibility: d.visibility,
        occurredAt: now,
        sourcePath: d.sourcePath,
      },
    })),
  );
  await queueForModel(
    scope,
    tx,
    ns,
    written.flatMap((d) =>
      d.sections.map((ord) => ({
        jobId: `doc:${d.key}:${ord}`,
        sourceKind: 'document' as const,
        sourceId: d.key,
        sourceOrd: ord,
        batchKey: `doc:${d.key}`,
        occurredAt: null,
      })),
    ),
  );
}

/** The extractors of the namespace's packs over every text; nothing at all when it has none. */
async function readByRules(
  scope: RequestScope,
  tx: Queryable,
  ns: string,
  texts: readonly TextToRead[],
): Promise<void> {
  const schema = await schemaPolicyFor(scope).schemaFor(tx, ns);
  const extractors = schema.extractors ?? [];
  if (extractors.length === 0) return;
  try {
    await withSavepoint(tx, 'rule_extraction', async (q) => {
      if (!readExtractionSettings(await findExtractionSettings(q, ns)).rules) return;
      const statements = texts.flatMap((t) => statementsOf(schema, t));
      await writeLearned(q, ns, statements, {
        now: new Date(),
        visibleScopes: scope.principal.scopes,
        allowedPredicates: allowedPredicates(schema),
        aliasAttributes: aliasAttributesOf(schema),
        onUnexpected: (error) => logUnexpected(scope, error),
      });
    });
  } catch (error) {
    // Extraction never fails the write it reads: the statements it made are rolled back alone.
    logUnexpected(scope, error);
  }
}

export function statementsOf(schema: NamespaceSchema, t: TextToRead): LearnedStatement[] {
  return applyExtractors(schema.extractors ?? [], t.text).map((m) => ({
    source: t.source,
    subject: { name: m.subjectName, kind: m.subjectKind },
    predicate: m.predicate,
    object: m.objectName !== null ? { name: m.objectName, kind: m.objectKind ?? 'entity' } : null,
    attribute: m.attribute,
    value: m.value,
    evidence: 'EXTRACTED',
    confidence: m.confidence,
    how: { by: 'rule', extractor: m.extractor, pack: m.pack, span: m.span },
  }));
}

/** In strict mode only the relations the packs declare (and the built-in ones) are written. */
export function allowedPredicates(schema: NamespaceSchema): Set<string> | null {
  return schema.strict ? new Set(schema.relations.keys()) : null;
}

/** No model configured: nothing is queued and no statement runs. */
async function queueForModel(
  scope: RequestScope,
  tx: Queryable,
  ns: string,
  jobs: JobWrite[],
): Promise<void> {
  if (jobs.length === 0 || !llmFor(scope.deps.config).available) return;
  await enqueueJobs(tx, ns, jobs);
}

function uriOf(provenance: unknown): string | null {
  if (provenance && typeof provenance === 'object' && !Array.isArray(provenance)) {
    const uri = (provenance as Record<string, unknown>).uri;
    if (typeof uri === 'string' && uri !== '') return uri.slice(0, 2048);
  }
  return null;
}

function logUnexpected(scope: RequestScope, error: unknown): void {
  scope.deps.logger.error('rule extraction failed; the batch is kept without it', { error: String(error) });
}
