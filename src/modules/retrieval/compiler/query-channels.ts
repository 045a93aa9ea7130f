/**
 * Stage 2, query channels: vector, lexical and exact concurrently, each ≤ 64 candidates through
 * its index. One embedding call feeds both the vector channel and the recall floor's distances;
 * the vector channel fails (or times out) the way that call did.
 */
import type { Embedder } from '../../../providers/embedder.js';
import type { Queryable } from '../../../db/database.js';
import type { ChannelRunner } from '../pipeline/channel-runner.js';
import { withTimeout } from '../pipeline/channel-runner.js';
import { exactChannel } from '../pipeline/channels/exact.js';
import { lexicalChannel } from '../pipeline/channels/lexical.js';
import { vectorChannel } from '../pipeline/channels/vector.js';
import { extractIdentifiers } from '../pipeline/identifiers.js';
import { type CandidateRef, chunkRef } from '../pipeline/candidate-ref.js';
import { type CompilePlan, runs } from './plan.js';
import { type RankLists, rankListOf, uniqueRefs } from './rank-lists.js';

export interface QueryChannelsOutput {
  lists: RankLists;
  /** Every distinct chunk the query channels found. */
  refs: CandidateRef[];
  /** The query embedding, or null (no query, not needed, or the call failed). */
  queryVector: number[] | null;
}

export async function runQueryChannels(
  plan: CompilePlan,
  deps: { db: Queryable; embedder: Embedder; channelTimeoutMs: number },
  runner: ChannelRunner,
  needsDistance: boolean,
): Promise<QueryChannelsOutput> {
  const needVector = plan.hasQuery && (runs(plan, 'vector') || needsDistance);
  let embeddingError: unknown = null;
  const embedding: Promise<number[] | null> = needVector
    ? withTimeout(
        deps.embedder.embed([plan.query]).then((v) => v[0] ?? null),
        deps.channelTimeoutMs,
      ).catch((error: unknown) => {
        embeddingError = error;
        return null;
      })
    : Promise.resolve(null);
  const { settings, filter, perChannel } = plan;
  const [vectorRefs, lexicalRefs, exactRefs] = await Promise.all([
    runs(plan, 'vector')
      ? runner.run('vector', plan.weights.vector, async () => {
          const e = await embedding;
          if (!e) throw embeddingError ?? new Error('query embedding unavailable');
          const hits = await vectorChannel(deps.db, {
            filter,
            embedding: e,
            limit: perChannel,
            efSearch: Math.max(settings.vector.efSearch, perChannel),
          });
          return hits.map((h) => ({ ...chunkRef(h), distance: h.score === null ? null : 1 - h.score }));
        })
      : [],
    runs(plan, 'lexical')
      ? runner.run('lexical', plan.weights.lexical, async () =>
          (
            await lexicalChannel(deps.db, {
              filter,
              query: plan.query,
              limit: perChannel,
              k1: settings.lexical.k1,
              b: settings.lexical.b,
              maxTerms: settings.lexical.maxTerms,
              prefilter: null,
            })
          ).map(chunkRef),
        )
      : [],
    runs(plan, 'exact')
      ? runner.run('exact', plan.weights.exact, async () =>
          (
            await exactChannel(deps.db, {
              filter,
              tokens: extractIdentifiers(plan.query, settings.exact.maxTokens),
              limit: perChannel,
            })
          ).map(chunkRef),
        )
      : [],
  ]);
  const lists: RankLists = new Map();
  if (runs(plan, 'vector')) lists.set('vector', rankListOf(vectorRefs));
  if (runs(plan, 'lexical')) lists.set('lexical', rankListOf(lexicalRefs));
  if (runs(plan, 'exact')) lists.set('exact', rankListOf(exactRefs));
  const queryVector = await embedding;
  if (needVector && !queryVector && !runner.has('vector')) {
    runner.recordFailure('embedding', 0, embeddingError, { message: 'query embedding unavailable' });
  }
  return { lists, refs: uniqueRefs([...vectorRefs, ...lexicalRefs, ...exactRefs]), queryVector };
}
