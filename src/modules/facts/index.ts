export { writeFactBatch } from './fact-batch.js';
export {
  FactService,
  describe,
  factInputSchema,
  predicateSchema,
  reasonSchema,
  writeFact,
} from './fact-service.js';
export type { FactInput, FactWriteContext, FactWriteOutcome } from './fact-service.js';
