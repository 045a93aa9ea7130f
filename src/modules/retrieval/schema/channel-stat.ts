import type { ChannelStat } from '../pipeline/search.js';
import { builder } from '../../../kernel/schema/builder.js';

export const ChannelStatRef = builder.objectRef<ChannelStat>('ChannelStat').implement({
  description: 'What one channel of a search did: candidates found and time taken.',
  fields: (t) => ({
    channel: t.exposeString('channel'),
    candidates: t.exposeInt('candidates'),
    ms: t.exposeFloat('ms'),
    error: t.string({ nullable: true, resolve: (s) => s.error ?? null }),
  }),
});
