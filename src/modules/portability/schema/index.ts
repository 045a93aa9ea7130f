import './import-plan.js';
import './import-finish.js';
