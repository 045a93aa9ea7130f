export {
  TextSearchService,
  assertTextSearchAvailable,
  chunkLanguageFor,
  languageTextOf,
} from './text-search-service.js';
export type { ChunkLanguage } from './text-search-service.js';
