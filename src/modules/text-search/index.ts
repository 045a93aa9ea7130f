export {
  TextSearchService,
  assertTextSearchAvailable,
  chunkLanguageFor,
  languageTextOf,
  resumeTextSearchReindexes,
} from './text-search-service.js';
export type { ChunkLanguage } from './text-search-service.js';
