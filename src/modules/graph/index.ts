export { GraphService } from './graph-service.js';
export type { GraphPath, Neighbor } from './graph-service.js';
export { ProvenanceService } from './provenance-service.js';
