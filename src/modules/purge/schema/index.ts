import './entity-purge.js';
import './redact-observation.js';
