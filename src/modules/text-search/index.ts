export {
  TextSearchService,
  assertTextSearchAvailable,
  chunkLanguageFor,
  chunkLanguageOf,
  languageTextOf,
  resumeTextSearchReindexes,
} from './text-search-service.js';
export type { ChunkLanguage } from './text-search-service.js';
