export { DOCUMENT_LIMITS, DocumentService } from './document-service.js';
export type { SourceDocumentView } from './document-service.js';
export { DOCUMENT_LINK_ORIGIN } from './store/document-store.js';
