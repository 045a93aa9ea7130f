/**
 * The `recent` channel: the freshest timed chunks (an observation's indexed text, episodes)
 * and observations without indexed text (data only) of the requested namespaces, as of
 * `asOf`, relevant to the requested scopes (their relevance scopes intersect, or they have
 * none). One bounded statement: per namespace and kind a backward scan of the
 * (namespace, occurred_at) index — ordered by that key alone, so the plan is the index scan
 * whatever the table statistics — merged by time (store/anchored-channel-store.ts).
 */
import type { Queryable } from '../../../../db/database.js';
import { type RecentRow, recentItems } from '../../store/anchored-channel-store.js';
import { CHANNEL_LIMIT } from './facts.js';

export interface RecentChannelInput {
  namespaces: string[];
  scopes: string[] | null;
  asOf: Date;
  limit: number;
}

export type RecentHit = RecentRow;

export async function recentChannel(
  q: Queryable,
  input: RecentChannelInput,
  visibleScopes: string[] | null,
): Promise<RecentHit[]> {
  const limit = Math.min(CHANNEL_LIMIT, Math.max(1, input.limit));
  return recentItems(q, { ...input, limit }, visibleScopes);
}
