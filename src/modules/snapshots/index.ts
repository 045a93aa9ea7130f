export { SnapshotService } from './snapshot-service.js';
