/** Every scenario, in the order they run (reads first, on the pristine dataset; then ingest). */
import { bulkImport } from './bulk-import.js';
import { context } from './context.js';
import { entityLookup } from './entity-lookup.js';
import { explore, exploreHubs } from './explore.js';
import { ingestObservationsWithModel, ingestObservationsWithRules } from './extraction.js';
import {
  ingestDocuments,
  ingestFacts,
  ingestObservations,
  ingestObservationsDurable,
  ingestObservationsWithAssertions,
} from './ingest.js';
import { neighborhood, neighborhoodHubs } from './neighborhood.js';
import { entityPage, factWalk } from './page-walk.js';
import { search } from './search.js';
import { typedContext } from './typed-context.js';
import type { Scenario } from './types.js';

export const SCENARIOS: readonly Scenario[] = [
  entityLookup,
  entityPage,
  factWalk,
  search,
  context,
  typedContext,
  explore,
  exploreHubs,
  neighborhood,
  neighborhoodHubs,
  ingestObservations,
  ingestObservationsWithRules,
  ingestObservationsWithModel,
  ingestObservationsDurable,
  ingestObservationsWithAssertions,
  ingestDocuments,
  ingestFacts,
  bulkImport,
];
