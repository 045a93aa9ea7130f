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

/**
 * Each service is built on first use: a request touches one or two of them, and building all
 * of them for every request was a measurable share of a small read's CPU.
 */
class RequestServices implements Services {
  #entities?: EntityService;
  #observations?: ObservationService;
  #facts?: FactService;
  #purge?: PurgeService;
  #documents?: DocumentService;
  #graph?: GraphService;
  #provenance?: ProvenanceService;
  #search?: SearchService;
  #context?: ContextService;
  #route?: RouteService;
  #audit?: AuditService;
  #domainPacks?: DomainPackService;
  #snapshots?: SnapshotService;
  #typedContext?: TypedContextService;
  #textSearch?: TextSearchService;
  #changes?: ChangeService;
  #bulkImport?: BulkImportService;
  #contextIndex?: ContextIndexService;

  constructor(private readonly scope: RequestScope) {}

  get entities(): EntityService {
    return (this.#entities ??= new EntityService(this.scope));
  }
  get observations(): ObservationService {
    return (this.#observations ??= new ObservationService(this.scope));
  }
  get facts(): FactService {
    return (this.#facts ??= new FactService(this.scope));
  }
  get purge(): PurgeService {
    return (this.#purge ??= new PurgeService(this.scope));
  }
  get documents(): DocumentService {
    return (this.#documents ??= new DocumentService(this.scope));
  }
  get graph(): GraphService {
    return (this.#graph ??= new GraphService(this.scope));
  }
  get provenance(): ProvenanceService {
    return (this.#provenance ??= new ProvenanceService(this.scope));
  }
  get search(): SearchService {
    return (this.#search ??= new SearchService(this.scope));
  }
  get context(): ContextService {
    return (this.#context ??= new ContextService(this.scope));
  }
  get route(): RouteService {
    return (this.#route ??= new RouteService(this.scope));
  }
  get audit(): AuditService {
    return (this.#audit ??= new AuditService(this.scope));
  }
  get domainPacks(): DomainPackService {
    return (this.#domainPacks ??= new DomainPackService(this.scope));
  }
  get snapshots(): SnapshotService {
    return (this.#snapshots ??= new SnapshotService(this.scope));
  }
  get typedContext(): TypedContextService {
    return (this.#typedContext ??= new TypedContextService(this.scope));
  }
  get textSearch(): TextSearchService {
    return (this.#textSearch ??= new TextSearchService(this.scope));
  }
  get changes(): ChangeService {
    return (this.#changes ??= new ChangeService(this.scope));
  }
  get bulkImport(): BulkImportService {
    return (this.#bulkImport ??= new BulkImportService(this.scope));
  }
  get contextIndex(): ContextIndexService {
    return (this.#contextIndex ??= new ContextIndexService(this.scope));
  }
}

export function createServices(scope: RequestScope): Services {
  return new RequestServices(scope);
}
