import { z } from 'zod';
import { assertCanRead, assertCanWrite, scopeAssignmentError } from '../../auth/principal.js';
import type { Queryable } from '../../db/database.js';
import { keyUnavailable, parseInput } from '../../errors.js';
import { globalId } from '../../global-id.js';
import { nsKey } from '../../kernel/loaders.js';
import {
  type EntityRow,
  type EntityWrite,
  type EntityWriteStatus,
  countEntities,
  listEntities,
  upsertEntity,
} from '../../kernel/store/entity-store.js';
import {
  type WritePayload,
  type WriteResult,
  rejected,
  rejectionFor,
  toPayload,
  writeItems,
  writeSetBased,
} from '../../kernel/batch.js';
import { upsertEntityBatch } from './entity-batch.js';
import { type PageArgs, decodeCursor, encodeCursor, pageWindow, toPage } from '../../kernel/pagination.js';
import type { LazyPage } from '../../kernel/pagination.js';
import { type EntitySelection, entityColumns, readEntityWithSelection } from '../../kernel/nested-read.js';
import type { RequestScope } from '../../kernel/request-scope.js';
import { schemaPolicyFor } from '../domain-packs/index.js';
import {
  confidenceSchema,
  jsonObjectSchema,
  keySchema,
  kindSchema,
  namespaceSchema,
  scopesSchema,
  titleSchema,
  visibilityScopes,
} from '../../kernel/validation.js';

/** Entity kinds `entities` lists only when they are named in `kinds`: observation nodes. */
export const LISTED_ONLY_ON_REQUEST = ['observation'] as const;

export const MAX_BATCH = 1000;

export const entityInputSchema = z.object({
  key: keySchema,
  kind: kindSchema,
  title: titleSchema.nullish(),
  attributes: jsonObjectSchema.nullish(),
  validFrom: z.date().nullish(),
  scopes: scopesSchema.nullish(),
  sourcePath: z.string().max(2048).nullish(),
  confidence: confidenceSchema.nullish(),
});
export type EntityInput = z.infer<typeof entityInputSchema>;

export class EntityService {
  constructor(private readonly scope: RequestScope) {}

  async upsertEntities(namespace: string, inputs: unknown[]): Promise<WritePayload> {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    assertCanWrite(this.scope.principal, ns);
    if (inputs.length > MAX_BATCH) {
      return toPayload(
        inputs.map((_, i) => rejected(i, 'LIMIT_EXCEEDED', `A batch holds at most ${MAX_BATCH} items.`)),
      );
    }
    const results: WriteResult[] = [];
    const valid: { index: number; value: EntityInput }[] = [];
    inputs.forEach((raw, index) => {
      const parsed = entityInputSchema.safeParse(raw);
      if (!parsed.success) {
        results.push(rejected(index, 'BAD_USER_INPUT', describe(parsed.error), keyOf(raw)));
        return;
      }
      const refused = scopeAssignmentError(this.scope.principal, parsed.data.scopes);
      if (refused) results.push(rejected(index, refused.code, refused.message, parsed.data.key));
      else valid.push({ index, value: parsed.data });
    });
    const now = new Date();
    const visibleScopes = this.scope.principal.scopes;
    const policy = schemaPolicyFor(this.scope);
    const writeOf = (e: EntityInput): EntityWrite => ({
      key: e.key,
      kind: e.kind,
      title: e.title ?? null,
      attributes: e.attributes ?? null,
      validFrom: e.validFrom ?? now,
      scopes: e.scopes ?? [],
      visibility: visibilityScopes(e.scopes ?? []),
      sourcePath: e.sourcePath ?? null,
      confidence: e.confidence ?? null,
      origin: 'AGENT',
      pii: false,
      piiCategories: [],
      observationId: null,
    });
    const answer = (index: number, key: string, status: WriteResult['status']): WriteResult => ({
      index,
      status,
      key,
      id: globalId('Entity', ns, key),
    });
    const one = async (tx: Queryable, e: EntityInput, index: number) => {
      await policy.assertEntity(tx, ns, { kind: e.kind, key: e.key, attributes: e.attributes });
      return answer(index, e.key, await upsertVisibleEntity(tx, ns, writeOf(e), visibleScopes));
    };
    const onUnexpected = (error: unknown) =>
      this.scope.deps.logger.error('upsertEntities item failed', { error: String(error) });
    const written = valid.length
      ? await this.scope.db.transaction('upsertEntities', async (tx) => {
          // Strict mode checks each entity against its stored attributes: one by one.
          if ((await policy.schemaFor(tx, ns)).strict) return writeItems(tx, valid, one, onUnexpected);
          return writeSetBased(
            tx,
            valid,
            async (q, items) => {
              const statuses = await upsertEntityBatch(
                q,
                ns,
                items.map((i) => writeOf(i.value)),
                visibleScopes,
              );
              return items.map(({ index, value }, n) => {
                const status = statuses[n]!;
                if (status === 'RETRY') return null;
                if (status === 'HIDDEN') return rejectionFor(index, keyUnavailable(), onUnexpected);
                return answer(index, value.key, status);
              });
            },
            one,
            onUnexpected,
          );
        })
      : [];
    return toPayload([...results, ...written]);
  }

  /** With the caller's selection, the entity and its selected relations come in one statement. */
  async get(namespace: string, key: string, selection?: EntitySelection | null): Promise<EntityRow | null> {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    assertCanRead(this.scope.principal, ns);
    if (selection) return readEntityWithSelection(this.scope, ns, key, selection);
    return this.scope.loaders.entity.load(nsKey(ns, key));
  }

  /**
   * A page of entities. Given the fields the client selected of each (`nodeFields`), only
   * their columns are read: a page of keys and titles parses no timestamps, arrays or JSON.
   */
  async list(
    namespace: string,
    filter: { kinds?: string[] | null; keyPrefix?: string | null },
    page: PageArgs,
    nodeFields: ReadonlySet<string> | null = null,
  ): Promise<LazyPage<EntityRow>> {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    assertCanRead(this.scope.principal, ns);
    const { backwards, size } = pageWindow(page);
    const after = page.after ? String(decodeCursor(page.after, 1)[0]) : null;
    const before = page.before ? String(decodeCursor(page.before, 1)[0]) : null;
    const visibleScopes = this.scope.principal.scopes;
    // Every observation has a graph node (kind "observation") so facts can point at it; a
    // listing of people and projects should not drown in them, so they are shown only on request.
    const kinds = filter.kinds?.length ? filter.kinds : null;
    const listed = { ...filter, kinds, excludeKinds: kinds ? null : [...LISTED_ONLY_ON_REQUEST] };
    const columns = nodeFields ? entityColumns(nodeFields) : null;
    const rows = await listEntities(
      this.scope.db,
      ns,
      { ...listed, afterKey: after, beforeKey: before, limit: size + 1, backwards },
      visibleScopes,
      columns,
    );
    // Only whole rows may answer later loads of the same key.
    if (!columns) for (const row of rows) this.scope.loaders.entity.prime(nsKey(ns, row.key), row);
    const result = toPage(
      rows,
      size,
      backwards,
      (r) => encodeCursor([r.key]),
      Boolean(backwards ? before : after),
    );
    // Counted only when the client selects totalCount: a count costs as much as the page.
    return { ...result, countTotal: () => countEntities(this.scope.db, ns, listed, visibleScopes) };
  }
}

/**
 * Upserts an entity the writer can see; a key taken by a hidden entity is rejected with the
 * one collision answer (KEY_UNAVAILABLE), never updated.
 */
export async function upsertVisibleEntity(
  tx: Queryable,
  namespace: string,
  w: EntityWrite,
  visibleScopes: string[] | null,
): Promise<Exclude<EntityWriteStatus, 'HIDDEN'>> {
  const status = await upsertEntity(tx, namespace, w, visibleScopes);
  if (status === 'HIDDEN') throw keyUnavailable();
  return status;
}

function describe(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; ');
}

function keyOf(raw: unknown): string | null {
  return raw && typeof raw === 'object' && typeof (raw as { key?: unknown }).key === 'string'
    ? (raw as { key: string }).key
    : null;
}
