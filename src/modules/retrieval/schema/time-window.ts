import type { TimeWindow } from '../router/time-window.js';
import { builder } from '../../../kernel/schema/builder.js';

export const TimeWindowKindEnum = builder.enumType('TimeWindowKind', {
  description: 'RECENT (the last 14 days), RANGE [since, until), BEFORE (until only), AFTER (since only).',
  values: ['RECENT', 'RANGE', 'BEFORE', 'AFTER'] as const,
});

export const TimeWindowRef = builder.objectRef<TimeWindow>('TimeWindow').implement({
  description: 'A time window named in a query, resolved against the reference time (UTC, [since, until)).',
  fields: (t) => ({
    kind: t.field({ type: TimeWindowKindEnum, resolve: (w) => w.kind }),
    since: t.field({ type: 'DateTime', nullable: true, resolve: (w) => w.since }),
    until: t.field({ type: 'DateTime', nullable: true, resolve: (w) => w.until }),
    phrase: t.exposeString('phrase', { description: 'The words of the query it was read from.' }),
  }),
});
