import './source-input.js';
import './episode-input.js';
import './assertion-input.js';
import './observation-input.js';
import './observation-relations.js';
import './observation-queries.js';
import './observation-mutations.js';
export { ObservationInputRef } from './observation-input.js';
