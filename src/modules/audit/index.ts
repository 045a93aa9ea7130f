export { AuditService } from './audit-service.js';
