import { LOCAL_PRINCIPAL } from '../auth/principal.js';
import type { ContextPackValue } from '../modules/retrieval/index.js';
import { parseGlobalId } from '../global-id.js';
import { createLoaders } from '../kernel/loaders.js';
import { ContextService } from '../modules/retrieval/index.js';
import { observationsOfItems } from '../modules/retrieval/index.js';
import type { AppDeps } from '../kernel/request-scope.js';
import { type QuestionScore, scoreRanking } from './metrics.js';

/**
 * The LoCoMo harness through `context(strategy)`: HYBRID against AUTO, so routing is
 * measured on the same compiler. A pack is turned into a ranking of turns: items by score, each
 * item's turns (a chunk's observation, an observation, a fact's evidence, a session compact's
 * whole session in time order), first occurrence kept.
 */

export const CONTEXT_EVAL_STRATEGIES = ['HYBRID', 'AUTO'] as const;
export type ContextEvalStrategy = (typeof CONTEXT_EVAL_STRATEGIES)[number];

export interface ContextQuestion {
  namespace: string;
  text: string;
  evidence: string[];
  /** Reference time: the day after the conversation's last turn (relative dates resolve against it). */
  asOf: Date;
}

export async function askThroughContext(
  deps: AppDeps,
  strategy: ContextEvalStrategy,
  q: ContextQuestion,
  diaOf: Map<string, string>,
  k: number,
  budgetTokens: number,
): Promise<QuestionScore> {
  const scope = {
    deps,
    db: deps.db,
    principal: LOCAL_PRINCIPAL,
    loaders: createLoaders(deps.db, LOCAL_PRINCIPAL.scopes),
  };
  const pack = await new ContextService(scope).compile({
    namespaces: [q.namespace],
    query: q.text,
    strategy,
    k,
    budgetTokens,
    asOf: q.asOf,
  });
  const ranking = await turnsOf(deps, q.namespace, pack, diaOf);
  // A pack covers what it holds, however many turns that is.
  return scoreRanking(ranking, q.evidence, ranking.length);
}

async function turnsOf(
  deps: AppDeps,
  namespace: string,
  pack: ContextPackValue,
  diaOf: Map<string, string>,
): Promise<string[]> {
  const items = pack.sections.flatMap((s) => s.items).filter((i) => i.kind !== 'current');
  items.sort((a, b) => b.score - a.score);
  const local = (id: string) => {
    const parts = parseGlobalId(id)?.parts ?? [];
    return String(parts[parts.length - 1] ?? '');
  };
  const chunkIds = items.filter((i) => i.kind === 'chunk').map((i) => Number(local(i.id)));
  const factIds = items.filter((i) => i.kind === 'fact').map((i) => local(i.id));
  const sessions = items.filter((i) => (i.kind as string) === 'session').map((i) => local(i.id));
  const {
    chunks: chunkObs,
    facts: factObs,
    sessions: sessionObs,
  } = await observationsOfItems(
    deps.db,
    namespace,
    { chunkIds, factIds, sessionIds: sessions },
    LOCAL_PRINCIPAL.scopes,
  );
  const ranking: string[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    const id = local(item.id);
    const observations =
      item.kind === 'chunk'
        ? (chunkObs.get(id) ?? [])
        : item.kind === 'observation'
          ? [id]
          : item.kind === 'fact'
            ? (factObs.get(id) ?? [])
            : (item.kind as string) === 'session'
              ? (sessionObs.get(id) ?? [])
              : [];
    for (const o of observations) {
      const turn = diaOf.get(o) ?? `observation:${o}`;
      if (seen.has(turn)) continue;
      seen.add(turn);
      ranking.push(turn);
    }
  }
  return ranking;
}
