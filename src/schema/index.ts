import { lexicographicSortSchema, printSchema } from 'graphql';
import { builder } from './builder.js';
import './types/scalars.js';
import './types/enums.js';
import './types/write-payload.js';
import './types/entity-input.js';
import './types/entity.js';
import './types/ref.js';
import './types/source-identity.js';
import './types/observation.js';
import './types/fact.js';
import './types/chunk.js';
import './types/ref-input.js';
import './types/source-input.js';
import './types/fact-input.js';
import './types/episode-input.js';
import './types/assertion-input.js';
import './types/observation-input.js';
import './types/entity-purge.js';
import './types/document-input.js';
import './types/source-ref.js';
import './types/source-document.js';
import './types/fact-connection.js';
import './types/observation-connection.js';
import './types/chunk-connection.js';
import './types/neighbor.js';
import './types/entity-relations.js';
import './types/observation-relations.js';
import './types/fact-queries.js';
import './types/observation-queries.js';
import './types/graph-path.js';
import './types/provenance.js';
import './types/timeline.js';
import './types/search-input.js';
import './types/channel-rank.js';
import './types/search-hit.js';
import './types/channel-stat.js';
import './types/rerank-report.js';
import './types/search-result.js';
import './types/answer.js';
import './types/domain-pack.js';
import './types/snapshot.js';
import './types/typed-context.js';
import './types/audit-entry.js';

export const schema = builder.toSchema({ sortSchema: false });

/** The committed SDL: sorted so that the file only changes when the API does. */
export function printSortedSchema(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
