import { builder } from './builder.js';

export interface SourceIdentity {
  system: string;
  stream: string | null;
  externalId: string | null;
}

export const SourceIdentityRef = builder.objectRef<SourceIdentity>('SourceIdentity').implement({
  description: 'Which outside source reported an observation, and its id there.',
  fields: (t) => ({
    system: t.exposeString('system'),
    stream: t.string({ nullable: true, resolve: (s) => s.stream }),
    externalId: t.string({ nullable: true, resolve: (s) => s.externalId }),
  }),
});
