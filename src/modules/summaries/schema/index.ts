import './entity-summary.js';
import './entity-summary-field.js';
import './summary-admin.js';
