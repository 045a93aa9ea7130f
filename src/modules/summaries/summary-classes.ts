import type { SummaryMaterial } from './summary-material.js';

/**
 * Which summaries an entity gets, so that none is served to someone who cannot see all of its
 * sources. A row is visible to everyone when its visibility is empty, else to a principal holding
 * one of its scopes; a summary resting on several rows must be visible only to principals who
 * see every one of them. So summaries are built per class: the public class rests on the rows
 * with empty visibility only; the class of scope `s` on the rows whose every visibility array
 * (a fact's own and its other endpoint's, an observation's, the entity's) is empty or holds `s`.
 * A holder of `s` sees each of those rows, so the summary of class `s` is stored with visibility
 * `{s}`. Scopes whose classes rest on the same rows share one summary (visibility: all of them).
 * A class that cannot see the entity itself has no summary. A reader holding several scopes is
 * served the richest of the summaries visible to it.
 */

export interface SummaryClass {
  /** The stored summary's visibility: empty for the public class. */
  visibility: string[];
  material: SummaryMaterial;
}

type Scope = string | null;

const admits = (arrays: readonly (readonly string[])[], scope: Scope) =>
  arrays.every((a) => a.length === 0 || (scope !== null && a.includes(scope)));

function scopesOf(m: SummaryMaterial): string[] {
  const all = new Set<string>(m.entity.visibility);
  for (const f of m.facts) for (const s of [...f.visibility, ...f.otherVisibility]) all.add(s);
  for (const n of m.notes) for (const s of n.visibility) all.add(s);
  return [...all].sort();
}

function materialFor(m: SummaryMaterial, scope: Scope): SummaryMaterial {
  return {
    entity: m.entity,
    facts: m.facts.filter((f) => admits([f.visibility, f.otherVisibility], scope)),
    notes: m.notes.filter((n) => admits([n.visibility], scope)),
  };
}

const sourceKey = (m: SummaryMaterial) =>
  `${m.facts.map((f) => f.factId).join(',')}|${m.notes.map((n) => n.observationId).join(',')}`;

/** The classes of one entity's material, the public one first, then by scope. */
export function summaryClasses(m: SummaryMaterial): SummaryClass[] {
  const classes: SummaryClass[] = [];
  const byRows = new Map<string, SummaryClass>();
  for (const scope of [null, ...scopesOf(m)]) {
    if (!admits([m.entity.visibility], scope)) continue;
    const material = materialFor(m, scope);
    const same = byRows.get(sourceKey(material));
    // The public class is never widened: it already reaches every reader.
    if (same && same.visibility.length > 0 && scope !== null) {
      same.visibility.push(scope);
      continue;
    }
    if (same && same.visibility.length === 0) continue;
    const cls: SummaryClass = { visibility: scope === null ? [] : [scope], material };
    byRows.set(sourceKey(material), cls);
    classes.push(cls);
  }
  return classes;
}
