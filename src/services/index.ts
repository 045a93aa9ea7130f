import { AuditService } from './audit-service.js';
import { BulkImportService } from './bulk-import-service.js';
import { ChangeService } from './change-service.js';
import { ContextService } from './context-service.js';
import { RouteService } from './route-service.js';
import { DocumentService } from './document-service.js';
import { DomainPackService } from './domain-pack-service.js';
import { EntityService } from './entity-service.js';
import { FactService } from './fact-service.js';
import { GraphService } from './graph-service.js';
import { ObservationService } from './observation-service.js';
import { PurgeService } from './purge-service.js';
import { ProvenanceService } from './provenance-service.js';
import type { RequestScope } from './request-scope.js';
import { ContextIndexService } from './context-index.js';
import { SearchService } from './search-service.js';
import { SnapshotService } from './snapshot-service.js';
import { TextSearchService } from './text-search-service.js';
import { TypedContextService } from './typed-context-service.js';

export interface Services {
  entities: EntityService;
  observations: ObservationService;
  facts: FactService;
  purge: PurgeService;
  documents: DocumentService;
  graph: GraphService;
  provenance: ProvenanceService;
  search: SearchService;
  context: ContextService;
  route: RouteService;
  audit: AuditService;
  domainPacks: DomainPackService;
  snapshots: SnapshotService;
  typedContext: TypedContextService;
  textSearch: TextSearchService;
  changes: ChangeService;
  bulkImport: BulkImportService;
  contextIndex: ContextIndexService;
}

export function createServices(scope: RequestScope): Services {
  return {
    entities: new EntityService(scope),
    observations: new ObservationService(scope),
    facts: new FactService(scope),
    purge: new PurgeService(scope),
    documents: new DocumentService(scope),
    graph: new GraphService(scope),
    provenance: new ProvenanceService(scope),
    search: new SearchService(scope),
    context: new ContextService(scope),
    route: new RouteService(scope),
    audit: new AuditService(scope),
    domainPacks: new DomainPackService(scope),
    snapshots: new SnapshotService(scope),
    typedContext: new TypedContextService(scope),
    textSearch: new TextSearchService(scope),
    changes: new ChangeService(scope),
    bulkImport: new BulkImportService(scope),
    contextIndex: new ContextIndexService(scope),
  };
}
