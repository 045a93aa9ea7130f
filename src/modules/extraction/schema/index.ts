import './extraction-status.js';
