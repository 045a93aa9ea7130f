/**
 * Entity upserts for a whole batch at once: one statement locks every key, one inserts the new
 * keys, one updates the changed ones, and attribute versions open in as many statements as one
 * key has versions in the batch (usually one or two). The writes of one key are folded in input
 * order with the same rule as the one-row upsert (`entityChange`), so every item answers what
 * it would have answered alone, in sequence.
 *
 * A key whose insert loses to a concurrent writer answers RETRY: nothing of it was written and
 * the caller writes its items one by one, after the batch.
 */
import type { Queryable } from '../../db/database.js';
import {
  type EntityInsertRow,
  type EntityState,
  type EntityUpdateRow,
  type EntityVersionRow,
  insertEntityRows,
  lockEntityStates,
  openAttributeVersions,
  updateEntityRows,
} from './store/entity-batch-store.js';
import {
  type EntityBefore,
  type EntityWrite,
  type EntityWriteStatus,
  entityChange,
  mergeAttributes,
  unionSorted,
  withTitle,
} from '../../kernel/store/entity-store.js';

/** HIDDEN: taken by a row the writer cannot see; RETRY: write this item alone, after the batch. */
export type EntityBatchStatus = EntityWriteStatus | 'RETRY';

/** The planned writes of one key: the statuses of its items, and the rows that make them so. */
interface KeyPlan {
  statuses: EntityWriteStatus[];
  insert: EntityInsertRow | null;
  update: EntityUpdateRow | null;
  versions: EntityVersionRow[];
}

/** Upserts `writes` (any keys, in order) in a constant number of statements; one status per write. */
export async function upsertEntityBatch(
  tx: Queryable,
  namespace: string,
  writes: readonly EntityWrite[],
  visibleScopes: string[] | null,
): Promise<EntityBatchStatus[]> {
  if (writes.length === 0) return [];
  const byKey = new Map<string, number[]>();
  writes.forEach((w, i) => {
    const list = byKey.get(w.key);
    if (list) list.push(i);
    else byKey.set(w.key, [i]);
  });
  const states = await lockEntityStates(tx, namespace, [...byKey.keys()], visibleScopes);
  const plans = new Map<string, KeyPlan>();
  for (const [key, indexes] of byKey) {
    plans.set(
      key,
      planKey(
        states.get(key),
        indexes.map((i) => writes[i]!),
      ),
    );
  }
  const inserts = [...plans.values()].flatMap((p) => (p.insert ? [p.insert] : []));
  const inserted = await insertEntityRows(tx, namespace, inserts);
  const lost = new Set(inserts.filter((r) => !inserted.has(r.key)).map((r) => r.key));
  const kept = [...plans].filter(([key]) => !lost.has(key)).map(([, plan]) => plan);
  await updateEntityRows(
    tx,
    namespace,
    kept.flatMap((p) => (p.update ? [p.update] : [])),
    visibleScopes,
  );
  // The k-th version of every key in the k-th statement: versions of one key open in order.
  const rounds = Math.max(0, ...kept.map((p) => p.versions.length));
  for (let k = 0; k < rounds; k += 1) {
    await openAttributeVersions(
      tx,
      namespace,
      kept.flatMap((p) => (p.versions[k] ? [p.versions[k]] : [])),
    );
  }
  const statuses: EntityBatchStatus[] = new Array(writes.length);
  for (const [key, indexes] of byKey) {
    const plan = plans.get(key)!;
    indexes.forEach((i, n) => {
      statuses[i] = lost.has(key) ? 'RETRY' : plan.statuses[n]!;
    });
  }
  return statuses;
}

/** Folds the writes of one key over its stored state, in order, as successive upserts would. */
function planKey(state: EntityState | undefined, writes: readonly EntityWrite[]): KeyPlan {
  const plan: KeyPlan = { statuses: [], insert: null, update: null, versions: [] };
  if (state && !state.visible) {
    plan.statuses = writes.map(() => 'HIDDEN');
    return plan;
  }
  let current: EntityBefore | null = state ?? null;
  for (const write of writes) {
    const w = withTitle(write, current);
    const merged = mergeAttributes(current?.attributes ?? {}, w.attributes);
    if (!current) {
      plan.statuses.push('CREATED');
      plan.insert = {
        key: w.key,
        kind: w.kind,
        title: w.title,
        attributes: merged,
        scopes: w.scopes,
        visibility: w.visibility,
        sourcePath: w.sourcePath,
        confidence: w.confidence,
        origin: w.origin,
        pii: w.pii,
        piiCategories: w.piiCategories,
        lastSeen: w.validFrom,
      };
      plan.versions.push(versionOf(w, merged));
      current = { ...w, attributes: merged, placeholder: false };
      continue;
    }
    const change = entityChange(current, w, merged);
    if (!change.changed) {
      plan.statuses.push('UNCHANGED');
      continue;
    }
    plan.statuses.push('UPDATED');
    const target = plan.insert ?? plan.update;
    if (target) {
      // A later write of the same key: what the update statement would have done to the row.
      Object.assign(target, {
        kind: w.kind,
        title: w.title,
        attributes: merged,
        scopes: change.scopes,
        visibility: unionSorted(target.visibility, w.visibility),
        sourcePath: w.sourcePath ?? target.sourcePath,
        confidence: w.confidence ?? target.confidence,
        pii: target.pii || w.pii,
        piiCategories: unionSorted(target.piiCategories, w.piiCategories),
        lastSeen: later(w.validFrom, target.lastSeen),
      });
    } else {
      plan.update = {
        key: w.key,
        kind: w.kind,
        title: w.title,
        attributes: merged,
        scopes: change.scopes,
        visibility: w.visibility,
        sourcePath: w.sourcePath,
        confidence: w.confidence,
        pii: w.pii,
        piiCategories: w.piiCategories,
        lastSeen: w.validFrom,
      };
    }
    if (change.versioned) plan.versions.push(versionOf(w, merged));
    current = {
      kind: w.kind,
      title: w.title,
      attributes: merged,
      placeholder: false,
      scopes: change.scopes,
      sourcePath: w.sourcePath ?? current.sourcePath,
      confidence: w.confidence ?? current.confidence,
    };
  }
  return plan;
}

function versionOf(
  w: EntityWrite & { title: string },
  attributes: Record<string, unknown>,
): EntityVersionRow {
  return { key: w.key, validFrom: w.validFrom, title: w.title, attributes, observationId: w.observationId };
}

function later(a: Date, b: Date): Date {
  return a.getTime() > b.getTime() ? a : b;
}
