/**
 * Conflict groups among scored facts: every version of an open conflict, keyed by each member
 * (union-find over `conflictsWith`). Versions outside the scored set (filtered, invisible) are
 * not part of the group. Pure.
 */
import { candidateKey } from './candidates.js';
import { type Scored, compareScored } from './signals.js';

export function conflictGroups(
  scored: readonly Scored[],
  known: ReadonlyMap<string, Scored>,
): Map<string, Scored[]> {
  const parent = new Map<string, string>();
  const find = (k: string): string => {
    let r = k;
    while (parent.get(r) !== r) r = parent.get(r)!;
    parent.set(k, r);
    return r;
  };
  const facts = scored.filter((s) => s.candidate.kind === 'fact' && s.candidate.conflict);
  for (const s of facts) parent.set(s.candidate.key, s.candidate.key);
  for (const s of facts) {
    for (const other of s.candidate.conflictsWith) {
      const ok = candidateKey({ kind: 'fact', namespace: s.candidate.namespace, id: other });
      if (!parent.has(ok) || !known.has(ok)) continue;
      parent.set(find(ok), find(s.candidate.key));
    }
  }
  const byRoot = new Map<string, Scored[]>();
  for (const s of facts) {
    const r = find(s.candidate.key);
    byRoot.set(r, [...(byRoot.get(r) ?? []), s]);
  }
  const out = new Map<string, Scored[]>();
  for (const members of byRoot.values()) {
    if (members.length < 2) continue;
    members.sort(compareScored);
    for (const m of members) out.set(m.candidate.key, members);
  }
  return out;
}
