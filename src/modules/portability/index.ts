export { BulkImportService } from './bulk-import-service.js';
export type { ImportFinish, ImportPlan } from './bulk-import-service.js';
export { checksums, importExport, isExportHeader, writeExport } from './export-service.js';
export type { NamespaceDigest } from './export-service.js';
export { importJsonlWith } from './import-service.js';
export type { ImportOptions, ImportSummary, ImportWriter } from './import-service.js';
export { migrateForReindex, reindex } from './reindex.js';
export { NamespaceMoveError, moveNames, moveNamespace } from './namespace-move.js';
export type { NamespaceMoveOptions, NamespaceMoveResult } from './namespace-move.js';
