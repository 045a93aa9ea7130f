import type { CompileRequest, ContextPackValue } from '../../compiler/pack-types.js';
import type { GraphPath } from '../../../graph/index.js';
import type { AttributeVersion, EntityMatch } from '../../store/route-store.js';
import type { AttributeValue, FacetsValue } from '../route-value.js';

import type { LookupMode, RouteDecision } from '../rules.js';
import type { TimeWindow } from '../time-window.js';

export type { AttributeValue, FacetsValue } from '../route-value.js';

/** What a handler may do: compile packs and read the graph, nothing else. */
export interface HandlerContext {
  /** The caller's request as a HYBRID compilation; handlers derive theirs from it. */
  base: CompileRequest;
  decision: RouteDecision;
  /** Entity hints resolved in the request's namespaces, in hint order. */
  resolved: EntityMatch[];
  asOf: Date | null;
  compile(request: CompileRequest): Promise<ContextPackValue>;
  attributesAt(entity: EntityMatch, asOf: Date | null): Promise<AttributeVersion | null>;
  paths(namespace: string, from: string, to: string): Promise<GraphPath[]>;
  facets(namespace: string, window: TimeWindow | null): Promise<FacetsValue>;
}

export interface HandlerResult {
  pack: ContextPackValue;
  /** The lookup mode actually served (ATTRIBUTE falls back to BROAD when the attribute is unknown). */
  lookupMode: LookupMode | null;
  attribute: AttributeValue | null;
  paths: GraphPath[];
  facets: FacetsValue | null;
  notes: string[];
}

export const emptyResult = (pack: ContextPackValue): HandlerResult => ({
  pack,
  lookupMode: null,
  attribute: null,
  paths: [],
  facets: null,
  notes: [],
});

/** A pack with no channels at all: traced, possibly holding only the caller's CURRENT state. */
export function noContentRequest(base: CompileRequest): CompileRequest {
  return { ...base, strategy: 'EXACT', query: '', anchors: [], subject: null };
}

export function withAnchors(base: CompileRequest, keys: string[]): CompileRequest {
  return { ...base, anchors: [...new Set([...base.anchors, ...keys])].slice(0, 20) };
}
