export { SummaryService } from './summary-service.js';
export type { EntitySummaryView } from './summary-service.js';
export { DEFAULT_REFRESHER_OPTIONS, SummaryRefresher } from './summary-refresher.js';
export type { RefresherOptions } from './summary-refresher.js';
export { rebuildSummaries } from './summary-builder.js';
export { SUMMARY_KIND, dropSummariesResting } from './store/summary-store.js';
export { summarySourcesOf } from './summary-sources.js';
export { summaryMetrics } from './metrics.js';
