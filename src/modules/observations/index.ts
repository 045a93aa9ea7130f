export { ContextIndexService, reindexContext } from './context-index.js';
export {
  ObservationService,
  collision,
  deriveObservationIndex,
  draftOf,
  duplicateOf,
  observationInputSchema,
  screenObservation,
  withBatchContext,
} from './observation-service.js';
export type { Draft, ObservationInput } from './observation-service.js';
