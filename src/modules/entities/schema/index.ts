import './entity-input.js';
import './entity-mutations.js';
export { EntityInputRef } from './entity-input.js';
