export { DEFAULT_ROUTER_TIMEOUT_MS, type RefinedRoute, type RouteSource, refineRoute } from './refine.js';
export {
  LOOKUP_MODES,
  type LookupMode,
  QUERY_TYPES,
  type QueryType,
  type RouteDecision,
  extractEntityHints,
  normaliseAttribute,
  routeByRules,
} from './rules.js';
export {
  RECENT_DAYS,
  type TimeWindow,
  type TimeWindowKind,
  extractTimeWindow,
  parseNamedDate,
} from './time-window.js';
