import './fact-input.js';
import './fact-queries.js';
import './fact-mutations.js';
export { FactInputRef } from './fact-input.js';
