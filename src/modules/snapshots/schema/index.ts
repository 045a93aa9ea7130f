import './snapshot.js';
