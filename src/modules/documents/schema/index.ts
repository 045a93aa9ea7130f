import './document-input.js';
import './source-ref.js';
import './source-document.js';
export { SourceDocumentRef } from './source-document.js';
export { SourceRefRef } from './source-ref.js';
