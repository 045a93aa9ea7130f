import type { QueryType } from '../rules.js';
import { handleEntityLookup } from './entity-lookup.js';
import { handleHybrid, handleNoSearch } from './hybrid.js';
import { handleRelationship } from './relationship.js';
import { handleTemporal, handleTemporalFacets } from './temporal.js';
import type { HandlerContext, HandlerResult } from './types.js';

export const HANDLERS: Readonly<Record<QueryType, (ctx: HandlerContext) => Promise<HandlerResult>>> = {
  ENTITY_LOOKUP: handleEntityLookup,
  RELATIONSHIP: handleRelationship,
  TEMPORAL: handleTemporal,
  TEMPORAL_FACETS: handleTemporalFacets,
  EXPLORATORY: handleHybrid,
  ASPECT: handleHybrid,
  NO_SEARCH: handleNoSearch,
};

export { findAttribute } from './entity-lookup.js';
export * from './types.js';
