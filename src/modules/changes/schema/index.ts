import './memory-change.js';
