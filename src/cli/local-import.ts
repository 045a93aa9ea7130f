import type { Principal } from '../auth/principal.js';
import { createContext } from '../context.js';
import type { AppDeps } from '../kernel/request-scope.js';
import {
  type ImportOptions,
  type ImportSummary,
  type ImportWriter,
  importJsonlWith,
} from '../modules/portability/index.js';

export function localImportWriter(deps: AppDeps, principal: Principal): ImportWriter {
  // A fresh request scope per batch: loaders' caches never grow with the file.
  return {
    recordObservations: (namespace, values) =>
      createContext(deps, principal).services.observations.recordObservations(namespace, values),
    retainDocuments: (namespace, values) =>
      createContext(deps, principal).services.documents.retainDocuments(namespace, values),
    importObservations: (namespace, values) =>
      createContext(deps, principal).services.bulkImport.importObservations(namespace, values),
    beginImport: (namespace, expected, vectorIndex) =>
      createContext(deps, principal).services.bulkImport.beginImport(namespace, expected, vectorIndex),
    finishImport: (namespace) => createContext(deps, principal).services.bulkImport.finishImport(namespace),
  };
}

export function importJsonl(
  deps: AppDeps,
  principal: Principal,
  input: NodeJS.ReadableStream,
  options: ImportOptions,
): Promise<ImportSummary> {
  return importJsonlWith(localImportWriter(deps, principal), input, options);
}
