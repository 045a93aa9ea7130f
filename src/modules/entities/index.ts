export { upsertEntityBatch } from './entity-batch.js';
export { EntityService, MAX_BATCH, entityInputSchema, upsertVisibleEntity } from './entity-service.js';
