export { createChangeFeed } from './change-feed.js';
export { ChangeService } from './change-service.js';
