/**
 * Newer first on one topic: a status thread ("lags 40s", "still lags 40s", "resolved") is
 * about one thing, and the latest word on it is what an agent needs, even when older messages
 * repeat the query's words more often. Among the observations that fit the query (a query
 * channel found them, not only `recent`) and name the same identifier of the query (an
 * incident key, a ticket, a service id), the newest takes the best score of the group, the
 * next newest the second best, and so on. Scores only move within the group, so nothing
 * outside it gains or loses a place; the move is reported as the `newer` signal. Pure.
 */
import type { Scored } from './signals.js';

const QUERY_CHANNELS = new Set(['lexical', 'vector', 'exact']);

/** The query identifier an observation is about (the first it names, in sorted order), or null. */
function topicOf(s: Scored, identifiers: readonly string[]): string | null {
  const c = s.candidate;
  if (c.section !== 'RECENT_OBSERVATIONS' || !c.time) return null;
  if (!s.signals.channels.some((h) => QUERY_CHANNELS.has(h.channel))) return null;
  const text = c.text.toLowerCase();
  return identifiers.find((id) => text.includes(id)) ?? null;
}

/** Reassigns scores within each topic group, newest first; returns new Scored values. */
export function newerFirst(scored: readonly Scored[], identifiers: ReadonlySet<string>): Scored[] {
  const ids = [...identifiers].sort();
  if (ids.length === 0) return [...scored];
  const groups = new Map<string, number[]>();
  scored.forEach((s, i) => {
    const topic = topicOf(s, ids);
    if (topic === null) return;
    const g = groups.get(topic) ?? [];
    g.push(i);
    groups.set(topic, g);
  });
  const out = [...scored];
  for (const members of groups.values()) {
    if (members.length < 2) continue;
    const scores = members.map((i) => scored[i]!.score).sort((a, b) => b - a);
    const byTime = [...members].sort(
      (a, b) => scored[b]!.candidate.time!.getTime() - scored[a]!.candidate.time!.getTime() || a - b,
    );
    byTime.forEach((i, rank) => {
      const s = scored[i]!;
      const moved = scores[rank]! - s.score;
      out[i] = { ...s, score: scores[rank]!, signals: { ...s.signals, newer: s.signals.newer + moved } };
    });
  }
  return out;
}
