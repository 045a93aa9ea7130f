/**
 * Documents of a batch written at once, with the answers the one-by-one write gives.
 *
 * One statement locks every key; then, for the documents that change, one statement keeps
 * their link facts' scopes in step, one deletes their old chunks, the entity batch upserts
 * their rows (entity-batch.ts), one stores their text and one inserts the chunks of all of
 * them. Links follow once every document of the batch is in: one statement finds which targets
 * exist, one the open links, one inserts the new ones and one closes the dropped ones.
 *
 * Left to the one-by-one write (answer null, after the batch, in order): every document of a
 * key the batch lists more than once (each must see the one before), and a document whose
 * insert loses to a concurrent writer.
 */
import type { Queryable } from '../../db/database.js';
import { factId } from '../../domain/ids.js';
import { type MemgateError, conflict, keyUnavailable } from '../../errors.js';
import {
  deleteChunksOfDocuments,
  findOpenLinksOf,
  insertDocumentChunks,
  lockDocumentStates,
  updateLinkFactScopesOf,
  writeDocumentBodies,
} from './store/document-batch-store.js';
import {
  LINKS_TO,
  type LinkFactWrite,
  closeLinkFacts,
  findExistingKeys,
  insertLinkFacts,
} from './store/document-store.js';
import type { DocumentBodyWrite } from './store/document-store.js';
import type { EntityWrite } from '../../kernel/store/entity-store.js';
import type { WriteStatus } from '../../kernel/batch.js';
import { type PreparedDocument, isUnchanged } from './document-rules.js';
import { upsertEntityBatch } from '../entities/index.js';

export interface DocumentBatchItem {
  doc: PreparedDocument;
  /** Its chunks follow in steps after the main transaction (document-steps.ts). */
  staged: boolean;
}

export type DocumentWriteAnswer = { status: WriteStatus; created: boolean };

/** The answer, the expected error, or null: write this one alone, after the batch. */
export type DocumentBatchAnswer = DocumentWriteAnswer | { error: MemgateError } | null;

/** Writes the documents of `items` in a number of statements independent of their count. */
export async function writeDocumentBatch(
  tx: Queryable,
  namespace: string,
  items: readonly DocumentBatchItem[],
  now: Date,
  visibleScopes: string[] | null,
): Promise<DocumentBatchAnswer[]> {
  const answers: DocumentBatchAnswer[] = items.map(() => null);
  const perKey = new Map<string, number>();
  for (const { doc } of items) perKey.set(doc.input.key, (perKey.get(doc.input.key) ?? 0) + 1);
  const single = items.flatMap((item, at) => (perKey.get(item.doc.input.key) === 1 ? [{ at, ...item }] : []));
  const states = await lockDocumentStates(
    tx,
    namespace,
    single.map((s) => s.doc.input.key),
    visibleScopes,
  );
  const writes: (DocumentBatchItem & { at: number; existed: boolean })[] = [];
  for (const s of single) {
    const state = states.get(s.doc.input.key) ?? null;
    if (state && !state.visible) answers[s.at] = { error: keyUnavailable() };
    else if (isUnchanged(state, s.doc)) answers[s.at] = { status: 'UNCHANGED', created: false };
    else if (!s.doc.chunks) {
      answers[s.at] = {
        error: conflict('The document changed while this batch was being written; send it again.'),
      };
    } else writes.push({ ...s, existed: state !== null });
  }
  const rewritten = writes.filter((w) => w.existed);
  await updateLinkFactScopesOf(
    tx,
    namespace,
    rewritten.map(({ doc }) => ({
      subject: doc.input.key,
      sourcePath: doc.sourcePath,
      scopes: doc.scopes,
      visibility: doc.visibility,
    })),
    visibleScopes,
  );
  await deleteChunksOfDocuments(
    tx,
    namespace,
    rewritten.map((w) => w.doc.input.key),
    visibleScopes,
  );
  const statuses = await upsertEntityBatch(
    tx,
    namespace,
    writes.map((w) => entityWriteOf(w.doc, now)),
    visibleScopes,
  );
  const kept = writes.filter((w, n) => {
    const status = statuses[n]!;
    if (status === 'HIDDEN') answers[w.at] = { error: keyUnavailable() };
    else if (status !== 'RETRY') {
      // Same title and attributes but new text is still an update of the document.
      answers[w.at] = { status: status === 'UNCHANGED' ? 'UPDATED' : status, created: !w.existed };
      return true;
    }
    return false;
  });
  await writeDocumentBodies(
    tx,
    namespace,
    kept.map(({ doc, staged }) => bodyWriteOf(doc, staged)),
    visibleScopes,
  );
  await insertDocumentChunks(
    tx,
    namespace,
    kept.flatMap(({ doc, staged }) =>
      staged ? [] : (doc.chunks ?? []).map((chunk) => ({ nodeKey: doc.input.key, chunk })),
    ),
    visibleScopes,
  );
  return answers;
}

/** The text row a document writes (the batch and the one-by-one path alike). */
export function bodyWriteOf(doc: PreparedDocument, staged: boolean): DocumentBodyWrite {
  return {
    key: doc.input.key,
    content: doc.input.content,
    provenance: doc.provenance,
    meta: doc.meta,
    // A staged document gets its hash when its last chunk is in (document-steps.ts).
    contentHash: staged ? null : doc.contentHash,
    scopes: doc.scopes,
    visibility: doc.visibility,
    pii: doc.pii.pii,
    piiCategories: doc.pii.categories,
  };
}

/** When a document's row and links hold from: its validFrom, else when it was written, else now. */
export function documentDate(doc: PreparedDocument, now: Date): Date {
  return doc.input.validFrom ?? doc.input.occurredAt ?? now;
}

/** The entity row a document writes (the batch and the one-by-one path alike). */
export function entityWriteOf(doc: PreparedDocument, now: Date): EntityWrite {
  return {
    key: doc.input.key,
    kind: doc.kind,
    title: doc.title,
    attributes: null,
    validFrom: documentDate(doc, now),
    scopes: doc.scopes,
    visibility: doc.visibility,
    sourcePath: doc.sourcePath,
    confidence: null,
    origin: 'AGENT',
    pii: doc.pii.pii,
    piiCategories: doc.pii.categories,
    observationId: null,
  };
}

export interface LinkChange {
  changed: boolean;
  missing: string[];
}

/**
 * Makes the open `LINKS_TO` facts of every written document match its `links`: new targets
 * that exist get a fact valid from now, targets no longer listed are closed (validTo = now). A
 * link kept across rewrites keeps its fact. One statement finds the targets; then three per
 * round, the k-th write of each key in round k (a key written twice sees its first links).
 */
export async function writeLinksOfBatch(
  tx: Queryable,
  namespace: string,
  written: readonly { doc: PreparedDocument; created: boolean }[],
  now: Date,
  visibleScopes: string[] | null,
): Promise<LinkChange[]> {
  const targets = [...new Set(written.flatMap((w) => w.doc.links))];
  const existing = await findExistingKeys(tx, namespace, targets, visibleScopes);
  const changes: LinkChange[] = new Array(written.length);
  const seen = new Map<string, number>();
  const rounds: number[][] = [];
  written.forEach((w, at) => {
    const k = seen.get(w.doc.input.key) ?? 0;
    seen.set(w.doc.input.key, k + 1);
    const round = rounds[k];
    if (round) round.push(at);
    else rounds.push([at]);
  });
  for (const round of rounds) {
    const items = round.map((at) => written[at]!);
    const outcome = await writeLinkRound(tx, namespace, items, existing, now, visibleScopes);
    round.forEach((at, n) => {
      changes[at] = outcome[n]!;
    });
  }
  return changes;
}

/** One round of `writeLinksOfBatch`: documents of distinct keys. */
async function writeLinkRound(
  tx: Queryable,
  namespace: string,
  written: readonly { doc: PreparedDocument; created: boolean }[],
  existing: ReadonlySet<string>,
  now: Date,
  visibleScopes: string[] | null,
): Promise<LinkChange[]> {
  // A document that did not exist before its write has no links yet.
  const open = await findOpenLinksOf(
    tx,
    namespace,
    written.filter((w) => !w.created).map((w) => w.doc.input.key),
    visibleScopes,
  );
  const adds: LinkFactWrite[] = [];
  const closes: string[] = [];
  const changes = written.map(({ doc }) => {
    const key = doc.input.key;
    const wanted = doc.links.filter((t) => existing.has(t));
    const missing = doc.links.filter((t) => !existing.has(t));
    const current = open.get(key) ?? [];
    const openTargets = new Set(current.map((l) => l.object));
    const wantedSet = new Set(wanted);
    const add = wanted.filter((t) => !openTargets.has(t));
    const close = current.filter((l) => !wantedSet.has(l.object)).map((l) => l.factId);
    for (const object of add) {
      adds.push({
        factId: factId(namespace, key, LINKS_TO, object, documentDate(doc, now)),
        subject: key,
        object,
        validFrom: documentDate(doc, now),
        sourcePath: doc.sourcePath,
        scopes: doc.scopes,
        visibility: doc.visibility,
      });
    }
    closes.push(...close);
    return { changed: add.length > 0 || close.length > 0, missing };
  });
  await insertLinkFacts(tx, namespace, adds);
  await closeLinkFacts(tx, namespace, closes, now, visibleScopes);
  return changes;
}
