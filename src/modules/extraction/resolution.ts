/**
 * Name resolution, pure: which entity a name read from text denotes, given the gazetteer's
 * hits. A hit of the expected kind wins, then the way it matched (key, alias, title), then a
 * real entity over a placeholder; a name nothing matches becomes a placeholder of the
 * expected kind (`placeholderKey`), so the next mention of it lands on the same node.
 */
import type { NamespaceSchema } from '../../domain/domain-pack.js';
import type { GazetteerHit, NameProbe } from './store/gazetteer-store.js';
import { placeholderKey } from './rules.js';

export interface NameWanted {
  name: string;
  kind: string;
}

export interface ResolvedName {
  key: string;
  kind: string;
  /** True when no entity matched: the key is a new placeholder's. */
  created: boolean;
}

const VIA_RANK: Record<GazetteerHit['via'], number> = { key: 3, alias: 2, title: 1 };

/** Lower-casing with Unicode rules and single spaces: how names are compared. */
export function lowerName(name: string): string {
  return name.toLowerCase().replace(/\s+/g, ' ').trim();
}

/** One probe per distinct name: the name, its lower case, and the keys it may already be. */
export function probesFor(wanted: readonly NameWanted[]): NameProbe[] {
  const byName = new Map<string, Set<string>>();
  for (const w of wanted) {
    const keys = byName.get(w.name) ?? new Set<string>([w.name]);
    keys.add(placeholderKey(w.kind, w.name));
    byName.set(w.name, keys);
  }
  return [...byName].map(([name, keys]) => ({ name, lower: lowerName(name), keys: [...keys] }));
}

/** The best hit for each wanted name and kind; unmatched names get a placeholder key. */
export function resolveNames(
  wanted: readonly NameWanted[],
  hits: readonly GazetteerHit[],
): Map<string, ResolvedName> {
  const byName = new Map<string, GazetteerHit[]>();
  for (const h of hits) {
    const list = byName.get(h.name);
    if (list) list.push(h);
    else byName.set(h.name, [h]);
  }
  const resolved = new Map<string, ResolvedName>();
  for (const w of wanted) {
    const id = nameId(w);
    if (resolved.has(id)) continue;
    const best = bestHit(byName.get(w.name) ?? [], w.kind);
    resolved.set(
      id,
      best
        ? { key: best.key, kind: best.kind, created: false }
        : { key: placeholderKey(w.kind, w.name), kind: w.kind, created: true },
    );
  }
  return resolved;
}

/** The map key of a wanted name: the same name may be wanted as two kinds. */
export function nameId(w: NameWanted): string {
  return `${w.kind}\u0000${w.name}`;
}

function bestHit(hits: readonly GazetteerHit[], kind: string): GazetteerHit | null {
  const compatible = hits.filter((h) => h.kind === kind || kind === 'entity' || h.kind === 'entity');
  const pool = compatible.length > 0 ? compatible : hits.filter((h) => !h.placeholder);
  let best: GazetteerHit | null = null;
  for (const h of pool) {
    if (
      !best ||
      score(h, kind) > score(best, kind) ||
      (score(h, kind) === score(best, kind) && h.key < best.key)
    )
      best = h;
  }
  return best;
}

function score(h: GazetteerHit, kind: string): number {
  return (h.kind === kind ? 100 : 0) + VIA_RANK[h.via] * 10 + (h.placeholder ? 0 : 1);
}

/**
 * The attributes whose values are names of their entity: alias templates of a single
 * placeholder and no literal text (`aliases: ['name']` or `'{nickname}'`).
 */
export function aliasAttributesOf(schema: NamespaceSchema): string[] {
  const names = new Set<string>();
  for (const kind of schema.kinds.values()) {
    for (const alias of kind.aliases) {
      if (alias.placeholders.length === 1 && alias.literals.every((l) => l === ''))
        names.add(alias.placeholders[0]!);
    }
  }
  return [...names].sort();
}
