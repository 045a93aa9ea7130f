export { PurgeService } from './purge-service.js';
