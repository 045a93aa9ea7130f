export type { ContextPackValue } from './compiler/compile.js';
export { ContextService, contextInputSchema } from './context-service.js';
export type { SearchMode } from './pipeline/search.js';
export type { ChannelWeights } from './pipeline/settings.js';
export { RouteService } from './route-service.js';
export { SearchService, searchInputSchema } from './search-service.js';
export { observationsOfItems } from './store/eval-store.js';
export { TypedContextService } from './typed-context-service.js';
