/**
 * Value types of a routed read (returned by `route`, on every AUTO pack, and traced): plain
 * data below the router's handlers and the compiler, so that neither imports the other.
 */
import type { ContextPackValue } from '../compiler/pack-types.js';
import type { GraphPath } from '../../graph/index.js';
import type { FactRow } from '../../../kernel/store/fact-store.js';
import type { FacetCountRow } from '../store/facets-store.js';
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

export interface FacetsValue {
  topics: FacetCountRow[];
  entities: FacetCountRow[];
  predicates: FacetCountRow[];
}

export interface AttributeValue {
  namespace: string;
  entityKey: string;
  entityTitle: string;
  name: string;
  value: unknown;
  validFrom: Date | null;
  validTo: Date | null;
  /** The observation the attribute version came from (provenance); null when not recorded. */
  observationId: string | null;
}

/** What an AUTO pack adds to a compiled one. */
export interface RoutedExtras {
  route: RouteValue | null;
  /** Facts about the entities involved that held before and no longer do. */
  invalidatedFacts: FactRow[];
}

export type RoutedPack = ContextPackValue & RoutedExtras;
