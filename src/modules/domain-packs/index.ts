export { DomainPackService, REGISTRY_AUDIT_NAMESPACE } from './domain-pack-service.js';
export { SchemaPolicy, checkFactKinds, schemaPolicyFor, schemaViolationError } from './schema-policy.js';
export { findEntityShapes } from './store/entity-shape-store.js';
export type { EntityShape } from './store/entity-shape-store.js';
