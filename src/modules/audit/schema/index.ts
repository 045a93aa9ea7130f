import './audit-entry.js';
