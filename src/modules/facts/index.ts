export { writeFactBatch } from './fact-batch.js';
export { FactService, describe, reasonSchema } from './fact-service.js';
export { factInputSchema, writeFact } from './fact-write.js';
export type { FactInput, FactWriteContext, FactWriteOutcome } from './fact-write.js';
