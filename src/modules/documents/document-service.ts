import type { z } from 'zod';
import { assertCanRead, assertCanWrite, scopeAssignmentError } from '../../auth/principal.js';
import type { Queryable } from '../../db/database.js';
import {
  DEFAULT_MAX_CHARS,
  DEFAULT_OVERLAP_CHARS,
  HEADING_SEPARATOR,
  chunkMarkdown,
  embeddingText,
} from '../../domain/chunking.js';
import { canonicalJson, sha256Hex } from '../../domain/ids.js';
import { combinePii, detectPii, detectPiiInJson } from '../../domain/pii.js';
import { conflict, parseInput } from '../../errors.js';
import { globalId } from '../../global-id.js';
import { type WrittenDocument as DocumentForExtraction, extractFromDocuments } from '../extraction/index.js';
import { nsKey } from '../../kernel/loaders.js';
import {
  type ChunkText,
  type ChunkWrite,
  findChunkTextsOfNode,
  replaceChunks,
} from '../../kernel/store/chunk-store.js';
import {
  findDocument,
  findDocumentStates,
  lockDocumentState,
  updateLinkFactScopes,
  writeDocumentBody,
} from './store/document-store.js';
import {
  type WritePayload,
  type WriteResult,
  rejected,
  rejectionFor,
  toPayload,
  writeSetBased,
} from '../../kernel/batch.js';
import {
  type DocumentWriteAnswer,
  bodyWriteOf,
  entityWriteOf,
  writeDocumentBatch,
  writeLinksOfBatch,
} from './document-batch.js';
import {
  CHUNKS_PER_STEP,
  MAIN_TRANSACTION_CHUNKS,
  claimDocuments,
  writeChunksInSteps,
} from './document-steps.js';
import { upsertVisibleEntity } from '../entities/index.js';
import { type ChunkLanguage, chunkLanguageFor, languageTextOf } from '../text-search/index.js';
import type { RequestScope } from '../../kernel/request-scope.js';
import { keySchema, namespaceSchema, visibilityScopes } from '../../kernel/validation.js';

import {
  DOCUMENT_LIMITS,
  type DocumentInput,
  type PreparedDocument,
  documentInputSchema,
  isUnchanged,
} from './document-rules.js';

/**
 * Part of the change hash: a different chunker setting must rewrite the chunks even when the
 * document itself is the same.
 */
const CHUNKER_VERSION = `markdown-v1:${DEFAULT_MAX_CHARS}:${DEFAULT_OVERLAP_CHARS}`;

export interface SourceDocumentView {
  namespace: string;
  key: string;
  kind: string;
  title: string;
  sourcePath: string | null;
  content: string;
  contentSource: 'original' | 'chunks';
  chunkCount: number;
  provenance: unknown;
  meta: Record<string, unknown> | null;
  pii: boolean;
  piiCategories: string[];
  updatedAt: Date;
}

export class DocumentService {
  constructor(private readonly scope: RequestScope) {}

  /**
   * Upserts documents: entity row with the original text and provenance, heading chunks with
   * embeddings (one embedder call for the whole batch, before the transaction), and `LINKS_TO`
   * facts to the linked keys that exist. Each item answers for itself.
   */
  async retainDocuments(namespace: string, inputs: readonly unknown[]): Promise<WritePayload> {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    assertCanWrite(this.scope.principal, ns);
    if (inputs.length > DOCUMENT_LIMITS.maxBatch) {
      return toPayload(
        inputs.map((_, i) =>
          rejected(i, 'LIMIT_EXCEEDED', `A batch holds at most ${DOCUMENT_LIMITS.maxBatch} documents.`),
        ),
      );
    }
    const results: WriteResult[] = [];
    const valid: { index: number; doc: PreparedDocument }[] = [];
    inputs.forEach((raw, index) => {
      const outcome = prepare(raw);
      const refused =
        'doc' in outcome ? scopeAssignmentError(this.scope.principal, outcome.doc.scopes) : null;
      if (refused && 'doc' in outcome) {
        results.push(rejected(index, refused.code, refused.message, outcome.doc.input.key));
      } else if ('doc' in outcome) valid.push({ index, doc: outcome.doc });
      else results.push({ ...outcome.rejection, index });
    });
    if (valid.length === 0) return toPayload(results);

    const visibleScopes = this.scope.principal.scopes;
    const [states, language] = await Promise.all([
      findDocumentStates(
        this.scope.db,
        ns,
        valid.map((v) => v.doc.input.key),
        visibleScopes,
      ),
      chunkLanguageFor(this.scope, ns),
    ]);
    const toEmbed = valid.filter((v) => !isUnchanged(states.get(v.doc.input.key) ?? null, v.doc));
    for (const v of toEmbed) v.doc.chunks = buildChunks(v.doc, language);
    const embedded = await this.embedChunks(toEmbed.map((v) => v.doc));
    if (!embedded) {
      // Without vectors a rewrite would be invisible to vector search: refuse it, keep the rest.
      const failed = new Set(toEmbed.map((v) => v.index));
      for (const v of toEmbed) {
        results.push(
          rejected(
            v.index,
            'UNAVAILABLE',
            'The embedding provider is unavailable; nothing of this document was written. Retry later.',
            v.doc.input.key,
          ),
        );
      }
      valid.splice(0, valid.length, ...valid.filter((v) => !failed.has(v.index)));
    }
    if (valid.length === 0) return toPayload(results);

    const claim = claimDocuments(
      this.scope.deps.db,
      valid.map((v) => nsKey(ns, v.doc.input.key)),
    );
    try {
      for (const v of valid.filter((v) => claim.busy.has(nsKey(ns, v.doc.input.key)))) {
        results.push(
          rejected(
            v.index,
            'CONFLICT',
            'This document is still being written by another request; send it again when that one has finished.',
            v.doc.input.key,
          ),
        );
      }
      const writable = valid.filter((v) => !claim.busy.has(nsKey(ns, v.doc.input.key)));
      const written = await this.writeBatch(ns, writable, visibleScopes);
      return toPayload([...results, ...written]);
    } finally {
      claim.release();
    }
  }

  /**
   * The main transaction, then the chunks of the documents too large for it in steps
   * (document-steps.ts).
   */
  private async writeBatch(
    ns: string,
    valid: { index: number; doc: PreparedDocument }[],
    visibleScopes: string[] | null,
  ): Promise<WriteResult[]> {
    if (valid.length === 0) return [];
    const staged = stagedDocuments(valid.map((v) => v.doc));
    const now = new Date();
    const written = await this.scope.db.transaction('retainDocuments', (tx) =>
      this.writeMain(tx, ns, valid, staged, now, visibleScopes),
    );
    for (const d of written.done) {
      if (!staged.has(d.doc) || d.result.status === 'UNCHANGED' || !d.doc.chunks) continue;
      const failure = await this.writeStaged(ns, d.doc, this.scope.principal.scopes);
      if (failure) Object.assign(d.result, { status: 'REJECTED', id: null, ...failure });
    }
    return written.results;
  }

  /**
   * The main transaction: the documents set-based (document-batch.ts, writeSetBased); the
   * documents the batch leaves, or all of them if it fails, one by one, each under its own
   * savepoint so a failing one rolls back alone. Links follow once every document of the batch
   * is in, so documents of one batch may link each other in any order.
   */
  private async writeMain(
    tx: Queryable,
    ns: string,
    valid: readonly { index: number; doc: PreparedDocument }[],
    staged: ReadonlySet<PreparedDocument>,
    now: Date,
    visibleScopes: string[] | null,
  ): Promise<{ results: WriteResult[]; done: WrittenDocument[] }> {
    const logError = (e: unknown) =>
      this.scope.deps.logger.error('retainDocuments item failed', { error: String(e) });
    // Whether each written document is new, by item index (what its links need).
    const createdOf = new Map<number, boolean>();
    const succeed = (index: number, doc: PreparedDocument, a: DocumentWriteAnswer): WriteResult => {
      createdOf.set(index, a.created);
      return { index, status: a.status, key: doc.input.key, id: globalId('Entity', ns, doc.input.key) };
    };
    const fail = (index: number, doc: PreparedDocument, error: unknown): WriteResult => {
      createdOf.delete(index);
      return { ...rejectionFor(index, error, logError), key: doc.input.key };
    };
    const results = await writeSetBased(
      tx,
      valid.map(({ index, doc }) => ({ index, value: doc })),
      async (q, items) => {
        const answers = await writeDocumentBatch(
          q,
          ns,
          items.map(({ value }) => ({ doc: value, staged: staged.has(value) })),
          now,
          this.scope.principal.scopes,
        );
        return items.map(({ index, value }, n) => {
          const answer = answers[n];
          if (!answer) return null;
          return 'error' in answer ? fail(index, value, answer.error) : succeed(index, value, answer);
        });
      },
      async (q, doc, index) =>
        succeed(index, doc, await this.writeDocument(q, ns, doc, now, staged.has(doc))),
      logError,
      {
        onBulkFailure: (error) =>
          this.scope.deps.logger.error('retainDocuments: the set-based write failed; writing one by one', {
            error: String(error),
            documents: valid.length,
            visibility: visibleScopes === null ? 'all' : 'scoped',
          }),
        onItemFailure: async (_q, doc, index, error) => fail(index, doc, error),
      },
    );
    const docOf = new Map(valid.map((v) => [v.index, v.doc]));
    const done = results
      .filter((r) => createdOf.has(r.index))
      .sort((x, y) => x.index - y.index)
      .map((result) => ({ result, doc: docOf.get(result.index)!, created: createdOf.get(result.index)! }));
    await this.linkWritten(tx, ns, done, now);
    await extractFromDocuments(
      this.scope,
      tx,
      ns,
      done.filter((d) => d.result.status !== 'UNCHANGED').map((d) => documentForExtraction(d.doc)),
    );
    return { results, done };
  }

  /** The links of the batch's written documents; a document whose links changed is UPDATED. */
  private async linkWritten(
    tx: Queryable,
    ns: string,
    done: readonly WrittenDocument[],
    now: Date,
  ): Promise<void> {
    const changes = await writeLinksOfBatch(tx, ns, done, now, this.scope.principal.scopes);
    done.forEach((d, n) => {
      const change = changes[n]!;
      if (change.changed && d.result.status === 'UNCHANGED') d.result.status = 'UPDATED';
      if (change.missing.length > 0) d.result.message = missingMessage(change.missing);
    });
  }

  /** The steps of one large document; a failure message for its result, or null. */
  private async writeStaged(
    ns: string,
    doc: PreparedDocument,
    visibleScopes: string[] | null,
  ): Promise<{ code: string; message: string } | null> {
    const chunks = doc.chunks ?? [];
    try {
      const outcome = await writeChunksInSteps(
        this.scope.db,
        ns,
        doc.input.key,
        chunks,
        doc.contentHash,
        visibleScopes,
      );
      if (outcome === 'complete') return null;
      return {
        code: 'CONFLICT',
        message: 'The document was deleted or rewritten while its chunks were being written.',
      };
    } catch (error) {
      this.scope.deps.logger.error('retainDocuments: a chunk step failed', { error: String(error) });
      return {
        code: 'INTERNAL',
        message: `The document's text is stored but only part of its ${chunks.length} chunks are searchable; send it again to finish.`,
      };
    }
  }

  /**
   * The document whole: the original text, or its chunks stitched back together. Personal data
   * is masked (and unmasked access audited) by the schema's output layer, like every field.
   */
  async source(namespace: string, key: string): Promise<SourceDocumentView | null> {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    const k = parseInput(keySchema, key, 'key');
    const principal = this.scope.principal;
    assertCanRead(principal, ns);
    const row = await findDocument(this.scope.db, ns, k, principal.scopes);
    if (!row) return null;
    let content: string;
    let contentSource: 'original' | 'chunks';
    if (row.content !== null) {
      content = row.content;
      contentSource = 'original';
    } else {
      content = stitchChunks(await findChunkTextsOfNode(this.scope.db, ns, k, principal.scopes));
      contentSource = 'chunks';
    }
    return {
      namespace: ns,
      key: row.key,
      kind: row.kind,
      title: row.title,
      sourcePath: row.sourcePath,
      content,
      contentSource,
      chunkCount: row.chunkCount,
      provenance: row.provenance ?? null,
      meta: row.meta,
      pii: row.pii,
      piiCategories: row.piiCategories,
      updatedAt: row.updatedAt,
    };
  }

  /** Embeds every chunk of `docs` in one call; false when the provider failed. */
  private async embedChunks(docs: PreparedDocument[]): Promise<boolean> {
    const chunks = docs.flatMap((d) => d.chunks ?? []);
    if (chunks.length === 0) return true;
    const { embedder, logger } = this.scope.deps;
    let vectors: number[][];
    try {
      vectors = await embedder.embed(chunks.map((c) => embeddingText(c.title ?? '', c.heading, c.text)));
    } catch (error) {
      logger.error('retainDocuments: embedding failed', { error: String(error), model: embedder.model });
      return false;
    }
    if (vectors.length !== chunks.length || vectors.some((v) => v.length !== embedder.dimensions)) {
      logger.error('retainDocuments: embedder returned the wrong shape', {
        expected: [chunks.length, embedder.dimensions],
        got: vectors.length,
      });
      return false;
    }
    chunks.forEach((c, i) => {
      c.embedding = vectors[i]!;
    });
    return true;
  }

  private async writeDocument(
    tx: Queryable,
    ns: string,
    doc: PreparedDocument,
    now: Date,
    staged: boolean,
  ): Promise<DocumentWriteAnswer> {
    const key = doc.input.key;
    const visibleScopes = this.scope.principal.scopes;
    // A hidden document reads as absent here; the upsert then finds its key taken.
    const state = await lockDocumentState(tx, ns, key, visibleScopes);
    if (isUnchanged(state, doc)) return { status: 'UNCHANGED', created: false };
    if (!doc.chunks) {
      throw conflict('The document changed while this batch was being written; send it again.');
    }
    // Before the document's own scopes change: the links are the ones the writer sees now.
    if (state)
      await updateLinkFactScopes(tx, ns, key, doc.sourcePath, doc.scopes, doc.visibility, visibleScopes);
    const status = await upsertVisibleEntity(tx, ns, entityWriteOf(doc, now), visibleScopes);
    await writeDocumentBody(tx, ns, bodyWriteOf(doc, staged));
    await replaceChunks(tx, ns, key, staged ? [] : doc.chunks);
    // Same title and attributes but new text is still an update of the document.
    return { status: status === 'UNCHANGED' ? 'UPDATED' : status, created: state === null };
  }
}

/**
 * The documents whose chunks follow in steps: those with more than CHUNKS_PER_STEP chunks, and
 * the small ones beyond MAIN_TRANSACTION_CHUNKS chunks in all (document-steps.ts says why).
 */
/** A document the main transaction wrote, with its result (links and large chunks amend it). */
interface WrittenDocument {
  result: WriteResult;
  doc: PreparedDocument;
  created: boolean;
}

function stagedDocuments(docs: readonly PreparedDocument[]): Set<PreparedDocument> {
  let budget = MAIN_TRANSACTION_CHUNKS;
  const staged = new Set<PreparedDocument>();
  for (const doc of docs) {
    const count = doc.chunks?.length ?? 0;
    if (count <= CHUNKS_PER_STEP && count <= budget) budget -= count;
    else staged.add(doc);
  }
  return staged;
}

function missingMessage(missing: string[]): string {
  const shown = missing.slice(0, 20).map((k) => JSON.stringify(k));
  const more = missing.length > shown.length ? ` and ${missing.length - shown.length} more` : '';
  return `Links skipped, no such key in the namespace: ${shown.join(', ')}${more}.`;
}

type Prepared = { doc: PreparedDocument } | { rejection: WriteResult };

/** Validation and everything derived without the database (hash, PII marks). */
function prepare(raw: unknown): Prepared {
  const key = keyOf(raw);
  const parsed = documentInputSchema.safeParse(raw);
  if (!parsed.success) {
    return { rejection: rejected(0, 'BAD_USER_INPUT', describe(parsed.error), key) };
  }
  const input = parsed.data;
  const limit = limitViolation(input);
  if (limit) return { rejection: rejected(0, 'LIMIT_EXCEEDED', limit, key) };
  const kind = input.kind ?? 'document';
  const scopes = [...new Set(input.scopes ?? [])].sort();
  const meta = input.meta ?? {};
  const provenance = input.provenance ?? null;
  const sourcePath = input.sourcePath ?? null;
  const links = [...new Set(input.links ?? [])];
  const contentHash = sha256Hex(
    canonicalJson({
      chunker: CHUNKER_VERSION,
      kind,
      title: input.title,
      content: input.content,
      meta,
      scopes,
      sourcePath,
      provenance,
    }),
  );
  const pii = combinePii(detectPii(input.title), detectPii(input.content), detectPiiInJson(meta));
  return {
    doc: {
      input,
      kind,
      title: input.title,
      scopes,
      visibility: visibilityScopes(scopes),
      sourcePath,
      meta,
      provenance,
      links,
      contentHash,
      pii,
      chunks: null,
    },
  };
}

function limitViolation(input: DocumentInput): string | null {
  const bytes = Buffer.byteLength(input.content, 'utf8');
  if (bytes > DOCUMENT_LIMITS.maxContentBytes) {
    return `content is ${bytes} bytes; the limit is ${DOCUMENT_LIMITS.maxContentBytes}`;
  }
  const scopes = input.scopes?.length ?? 0;
  if (scopes > DOCUMENT_LIMITS.maxScopes)
    return `${scopes} scopes; the limit is ${DOCUMENT_LIMITS.maxScopes}`;
  const links = input.links?.length ?? 0;
  if (links > DOCUMENT_LIMITS.maxLinks) return `${links} links; the limit is ${DOCUMENT_LIMITS.maxLinks}`;
  for (const [name, value] of [
    ['meta', input.meta],
    ['provenance', input.provenance],
  ] as const) {
    if (value == null) continue;
    const size = Buffer.byteLength(canonicalJson(value), 'utf8');
    if (size > DOCUMENT_LIMITS.maxJsonBytes) {
      return `${name} is ${size} bytes as JSON; the limit is ${DOCUMENT_LIMITS.maxJsonBytes}`;
    }
  }
  return null;
}

/**
 * Heading chunks with what search needs; embeddings are filled in by one batched call. Each
 * section gets its own language (in an `auto` namespace a document may mix them).
 */
function buildChunks(doc: PreparedDocument, language: ChunkLanguage): ChunkWrite[] {
  return chunkMarkdown(doc.input.content).map((piece) => {
    const heading = piece.heading === '' ? null : piece.heading;
    const mark = combinePii(detectPii(doc.title), detectPii(piece.text));
    const searchText = [doc.title, heading ?? '', piece.text].filter((part) => part.trim() !== '').join('\n');
    return {
      order: piece.order,
      kind: doc.kind,
      title: doc.title,
      heading,
      text: piece.text,
      searchText,
      sourcePath: doc.sourcePath,
      meta: doc.meta,
      scopes: doc.scopes,
      visibility: doc.visibility,
      observationId: null,
      // A back-filled document is held (asOf reads) from when it was written, not from today.
      occurredAt: doc.input.occurredAt ?? null,
      pii: mark.pii,
      piiCategories: mark.categories,
      embedding: null,
      // The section's own text decides: a short English title must not outvote Russian prose.
      tsConfig: language(languageTextOf(heading, piece.text)),
    };
  });
}

/**
 * Rebuilds text from ordered chunks: headings come back as Markdown headings (each new level
 * of the heading path once), and the overlap a chunk repeats from its predecessor in the same
 * section is removed.
 */
export function stitchChunks(chunks: readonly ChunkText[]): string {
  let out = '';
  let prev: ChunkText | null = null;
  let path: string[] = [];
  for (const chunk of chunks) {
    const heading = chunk.heading ?? '';
    if (prev && heading === (prev.heading ?? '')) {
      const overlap = overlapLength(prev.text, chunk.text);
      out += overlap > 0 ? chunk.text.slice(overlap) : `\n\n${chunk.text}`;
    } else {
      const next = heading === '' ? [] : heading.split(HEADING_SEPARATOR);
      let same = 0;
      while (same < path.length && same < next.length && path[same] === next[same]) same++;
      const lines = next.slice(same).map((part, i) => `${'#'.repeat(Math.min(6, same + i + 1))} ${part}`);
      // A repeated path (headings A, B, A again) still needs its heading back.
      if (lines.length === 0 && next.length > 0)
        lines.push(`${'#'.repeat(Math.min(6, next.length))} ${next.at(-1)}`);
      const block = [...lines, chunk.text].join('\n\n');
      out += out === '' ? block : `\n\n${block}`;
      path = next;
    }
    prev = chunk;
  }
  return out;
}

/**
 * Length of the longest prefix of `next` that ends `prev`, starting on a word boundary in
 * `prev` and followed by whitespace in `next` (the chunker's overlap: a tail of the previous
 * chunk, then the joiner). The window is wider than any overlap the chunker is configured with
 * (documents 120, long observations 150); the boundary checks keep it from matching by chance.
 */
export const MAX_STITCH_OVERLAP = 512;

export function overlapLength(prev: string, next: string, max = MAX_STITCH_OVERLAP): number {
  for (let k = Math.min(max, prev.length, next.length - 1); k > 0; k--) {
    if (!/\s/.test(next.charAt(k))) continue;
    const start = prev.length - k;
    if (start > 0 && !/\s/.test(prev.charAt(start - 1))) continue;
    if (prev.endsWith(next.slice(0, k))) return k;
  }
  return 0;
}

function describe(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; ');
}

function keyOf(raw: unknown): string | null {
  return raw && typeof raw === 'object' && typeof (raw as { key?: unknown }).key === 'string'
    ? (raw as { key: string }).key
    : null;
}

/** What extraction reads of a written document: its text and the orders of its sections. */
function documentForExtraction(doc: PreparedDocument): DocumentForExtraction {
  return {
    key: doc.input.key,
    content: doc.input.content,
    scopes: doc.scopes,
    visibility: doc.visibility,
    sourcePath: doc.sourcePath,
    sections: (doc.chunks ?? []).map((c) => c.order),
  };
}
