import './neighbor.js';
import './entity-relations.js';
import './entity-version.js';
import './graph-path.js';
import './provenance.js';
import './timeline.js';
export { GraphPathRef } from './graph-path.js';
export { NeighborRef } from './neighbor.js';
export { ProvenanceRef } from './provenance.js';
