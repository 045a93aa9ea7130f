export { DocumentService } from './document-service.js';
export { DOCUMENT_LIMITS } from './document-rules.js';
export type { SourceDocumentView } from './document-service.js';
export { DOCUMENT_LINK_ORIGIN } from './store/document-store.js';
