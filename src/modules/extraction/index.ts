export { extractFromDocuments, extractFromObservations } from './extract-on-write.js';
export type { WrittenDocument, WrittenObservation } from './extract-on-write.js';
