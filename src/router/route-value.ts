import type { GraphPath } from '../services/graph-service.js';
import type { AttributeValue, FacetsValue } from './handlers/types.js';
import type { RouteSource } from './refine.js';
import type { LookupMode, QueryType } from './rules.js';
import type { TimeWindow } from './time-window.js';

export interface ResolvedEntityValue {
  hint: string;
  namespace: string;
  key: string;
  title: string;
  matchedBy: 'KEY' | 'TITLE' | 'ALIAS' | 'TRIGRAM';
}

/** How a query was routed (returned by `route` and on every AUTO pack, and traced). */
export interface RouteValue {
  queryType: QueryType;
  lookupMode: LookupMode | null;
  entityHints: string[];
  resolvedEntities: ResolvedEntityValue[];
  attribute: string | null;
  timeWindow: TimeWindow | null;
  /** What relative dates were resolved against: the caller's asOf / referenceTime, else the request time. */
  referenceTime: Date;
  source: RouteSource;
  fallbackReason: string | null;
  reason: string;
  /** Handler results (AUTO only). */
  attributeValue: AttributeValue | null;
  paths: GraphPath[];
  facets: FacetsValue | null;
  /** Sessions whose items were replaced by their compact. */
  compactedSessions: string[];
  notes: string[];
}
