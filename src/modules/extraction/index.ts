export { extractFromDocuments, extractFromObservations } from './extract-on-write.js';
export type { WrittenDocument, WrittenObservation } from './extract-on-write.js';
export { ExtractionService } from './extraction-service.js';
export type { ExtractionStatusView } from './extraction-service.js';
export { DEFAULT_WORKER_OPTIONS, ExtractionWorker } from './worker.js';
export type { RoundOutcome, WorkerOptions } from './worker.js';
export { listLearnedFacts } from './store/source-store.js';
export { readExtractionSettings } from './settings.js';
export { findExtractionSettings } from './store/extraction-settings-store.js';
