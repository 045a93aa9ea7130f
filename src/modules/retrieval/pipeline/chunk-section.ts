import type { SectionKey } from '../../../domain/untrusted-text.js';

/**
 * Which section a chunk's text is shown under, in context packs and in search context alike:
 * an episode; an entity's summary; the text of an observation itself (a chat message, a ticket,
 * a note: the chunk's node is the observation); or a retained document's.
 */
export type ChunkSection = 'EPISODES' | 'SUMMARIES' | 'RECENT_OBSERVATIONS' | 'DOCUMENTS';

export function chunkSection(chunk: {
  kind: string;
  nodeKey: string;
  observationId: string | null;
}): ChunkSection {
  if (chunk.kind === 'episode') return 'EPISODES';
  if (chunk.kind === 'summary') return 'SUMMARIES';
  return chunk.observationId === chunk.nodeKey ? 'RECENT_OBSERVATIONS' : 'DOCUMENTS';
}

/** The header of each section, in the order a pack renders them. */
export const CHUNK_SECTION_HEADERS: Readonly<Record<ChunkSection, SectionKey>> = {
  SUMMARIES: 'summaries',
  EPISODES: 'episodes',
  DOCUMENTS: 'documents',
  RECENT_OBSERVATIONS: 'recentObservations',
};
