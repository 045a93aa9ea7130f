import { AuditService } from './modules/audit/index.js';
import { BulkImportService } from './modules/portability/index.js';
import { ChangeService } from './modules/changes/index.js';
import { ContextService } from './modules/retrieval/index.js';
import { RouteService } from './modules/retrieval/index.js';
import { DocumentService } from './modules/documents/index.js';
import { DomainPackService } from './modules/domain-packs/index.js';
import { EntityService } from './modules/entities/index.js';
import { ExtractionService } from './modules/extraction/index.js';
import { FactService } from './modules/facts/index.js';
import { GraphService } from './modules/graph/index.js';
import { ObservationService } from './modules/observations/index.js';
import { PurgeService } from './modules/purge/index.js';
import { ProvenanceService } from './modules/graph/index.js';
import type { RequestScope } from './kernel/request-scope.js';
import { ContextIndexService } from './modules/observations/index.js';
import { SearchService } from './modules/retrieval/index.js';
import { SnapshotService } from './modules/snapshots/index.js';
import { SummaryService } from './modules/summaries/index.js';
import { TextSearchService } from './modules/text-search/index.js';
import { TypedContextService } from './modules/retrieval/index.js';

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
  extraction: ExtractionService;
  summaries: SummaryService;
}

/**
 * Each service is built on first use: a request touches one or two of them, and building all
 * of them for every request was a measurable share of a small read's CPU.
 */
class RequestServices implements Services {
  readonly #built: Partial<Services> = {};

  constructor(private readonly scope: RequestScope) {}

  #once<K extends keyof Services>(name: K, Service: new (scope: RequestScope) => Services[K]): Services[K] {
    // Written once: a walk reads `graph` for every field it resolves.
    const built = this.#built[name];
    if (built !== undefined) return built;
    const service = new Service(this.scope);
    this.#built[name] = service;
    return service;
  }

  get entities(): EntityService {
    return this.#once('entities', EntityService);
  }
  get observations(): ObservationService {
    return this.#once('observations', ObservationService);
  }
  get facts(): FactService {
    return this.#once('facts', FactService);
  }
  get purge(): PurgeService {
    return this.#once('purge', PurgeService);
  }
  get documents(): DocumentService {
    return this.#once('documents', DocumentService);
  }
  get graph(): GraphService {
    return this.#once('graph', GraphService);
  }
  get provenance(): ProvenanceService {
    return this.#once('provenance', ProvenanceService);
  }
  get search(): SearchService {
    return this.#once('search', SearchService);
  }
  get context(): ContextService {
    return this.#once('context', ContextService);
  }
  get route(): RouteService {
    return this.#once('route', RouteService);
  }
  get audit(): AuditService {
    return this.#once('audit', AuditService);
  }
  get domainPacks(): DomainPackService {
    return this.#once('domainPacks', DomainPackService);
  }
  get snapshots(): SnapshotService {
    return this.#once('snapshots', SnapshotService);
  }
  get typedContext(): TypedContextService {
    return this.#once('typedContext', TypedContextService);
  }
  get textSearch(): TextSearchService {
    return this.#once('textSearch', TextSearchService);
  }
  get changes(): ChangeService {
    return this.#once('changes', ChangeService);
  }
  get bulkImport(): BulkImportService {
    return this.#once('bulkImport', BulkImportService);
  }
  get contextIndex(): ContextIndexService {
    return this.#once('contextIndex', ContextIndexService);
  }
  get extraction(): ExtractionService {
    return this.#once('extraction', ExtractionService);
  }
  get summaries(): SummaryService {
    return this.#once('summaries', SummaryService);
  }
}

export function createServices(scope: RequestScope): Services {
  return new RequestServices(scope);
}
