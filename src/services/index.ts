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
    this.#entities ??= new EntityService(this.scope);
    return this.#entities;
  }
  get observations(): ObservationService {
    this.#observations ??= new ObservationService(this.scope);
    return this.#observations;
  }
  get facts(): FactService {
    this.#facts ??= new FactService(this.scope);
    return this.#facts;
  }
  get purge(): PurgeService {
    this.#purge ??= new PurgeService(this.scope);
    return this.#purge;
  }
  get documents(): DocumentService {
    this.#documents ??= new DocumentService(this.scope);
    return this.#documents;
  }
  get graph(): GraphService {
    this.#graph ??= new GraphService(this.scope);
    return this.#graph;
  }
  get provenance(): ProvenanceService {
    this.#provenance ??= new ProvenanceService(this.scope);
    return this.#provenance;
  }
  get search(): SearchService {
    this.#search ??= new SearchService(this.scope);
    return this.#search;
  }
  get context(): ContextService {
    this.#context ??= new ContextService(this.scope);
    return this.#context;
  }
  get route(): RouteService {
    this.#route ??= new RouteService(this.scope);
    return this.#route;
  }
  get audit(): AuditService {
    this.#audit ??= new AuditService(this.scope);
    return this.#audit;
  }
  get domainPacks(): DomainPackService {
    this.#domainPacks ??= new DomainPackService(this.scope);
    return this.#domainPacks;
  }
  get snapshots(): SnapshotService {
    this.#snapshots ??= new SnapshotService(this.scope);
    return this.#snapshots;
  }
  get typedContext(): TypedContextService {
    this.#typedContext ??= new TypedContextService(this.scope);
    return this.#typedContext;
  }
  get textSearch(): TextSearchService {
    this.#textSearch ??= new TextSearchService(this.scope);
    return this.#textSearch;
  }
  get changes(): ChangeService {
    this.#changes ??= new ChangeService(this.scope);
    return this.#changes;
  }
  get bulkImport(): BulkImportService {
    this.#bulkImport ??= new BulkImportService(this.scope);
    return this.#bulkImport;
  }
  get contextIndex(): ContextIndexService {
    this.#contextIndex ??= new ContextIndexService(this.scope);
    return this.#contextIndex;
  }
}

export function createServices(scope: RequestScope): Services {
  return new RequestServices(scope);
}
