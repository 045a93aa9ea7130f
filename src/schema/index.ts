import { lexicographicSortSchema, printSchema } from 'graphql';
import { builder } from '../kernel/schema/builder.js';
// The core types, then each module's types (they extend the core ones with builder.objectFields).
import '../kernel/schema/scalars.js';
import '../kernel/schema/enums.js';
import '../kernel/schema/write-payload.js';
import '../kernel/schema/entity.js';
import '../kernel/schema/ref.js';
import '../kernel/schema/source-identity.js';
import '../kernel/schema/observation.js';
import '../kernel/schema/fact.js';
import '../kernel/schema/chunk.js';
import '../kernel/schema/ref-input.js';
import '../kernel/schema/fact-connection.js';
import '../kernel/schema/observation-connection.js';
import '../kernel/schema/chunk-connection.js';
import '../modules/entities/schema/index.js';
import '../modules/observations/schema/index.js';
import '../modules/facts/schema/index.js';
import '../modules/purge/schema/index.js';
import '../modules/documents/schema/index.js';
import '../modules/changes/schema/index.js';
import '../modules/graph/schema/index.js';
import '../modules/retrieval/schema/index.js';
import '../modules/audit/schema/index.js';
import '../modules/domain-packs/schema/index.js';
import '../modules/snapshots/schema/index.js';
import '../modules/text-search/schema/index.js';
import '../modules/portability/schema/index.js';
import '../modules/extraction/schema/index.js';
import '../modules/summaries/schema/index.js';

export const schema = builder.toSchema({ sortSchema: false });

/** The committed SDL: sorted so that the file only changes when the API does. */
export function printSortedSchema(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
