import { EntityService } from './entity-service.js';
import type { RequestScope } from './request-scope.js';

export interface Services {
  entities: EntityService;
}

export function createServices(scope: RequestScope): Services {
  return {
    entities: new EntityService(scope),
  };
}
