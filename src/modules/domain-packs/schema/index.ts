import './domain-pack.js';
