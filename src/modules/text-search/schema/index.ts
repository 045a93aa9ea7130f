import './text-search-configuration.js';
import './text-search-reindex.js';
import './text-search-settings.js';
