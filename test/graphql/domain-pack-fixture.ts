/** A domain pack the domain-pack, snapshot and typed-context tests share. */
export const SERVICES_PACK = {
  name: 'services',
  version: '1.0.0',
  description: 'Services, their endpoints and owners.',
  kinds: [
    {
      kind: 'service',
      naturalKey: 'service:{name}',
      aliases: ['{name}'],
      kindAliases: ['svc'],
      attributes: {
        type: 'object',
        properties: {
          tier: { enum: ['gold', 'silver', 'bronze'] },
          port: { type: 'integer', minimum: 1, maximum: 65535 },
        },
      },
    },
    {
      kind: 'endpoint',
      naturalKey: 'endpoint:{service}:<method> <path>',
      aliases: ['<method> <path>', 'operationId'],
      idPatterns: ['(?<method>GET|POST|PUT|PATCH|DELETE) (?<path>/\\S+)'],
      attributes: { type: 'object', required: ['method'], properties: { method: { type: 'string' } } },
    },
    { kind: 'team', naturalKey: { type: 'string', pattern: '^team:[a-z0-9-]+$' } },
    { kind: 'ticket', naturalKey: 'ticket:{id}', idPatterns: ['\\b(?<id>[A-Z]{2,10}-\\d{1,6})\\b'] },
  ],
  relations: [
    { relation: 'exposes', fromKinds: ['service'], toKinds: ['endpoint'] },
    { relation: 'calls', fromKinds: ['service'], toKinds: ['endpoint'] },
    { relation: 'owned_by', fromKinds: ['service'], toKinds: ['team'], cardinality: 'one' },
    { relation: 'mentions', fromKinds: ['ticket'], toKinds: ['service', 'endpoint'] },
  ],
};
