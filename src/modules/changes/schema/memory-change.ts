import type { Context } from '../../../context.js';
import { isDatabaseUnavailable } from '../../../db/unavailable.js';
import { MemgateError } from '../../../errors.js';
import type { Ending } from '../change-queue.js';
import type { LiveChange, PendingChange } from '../change-service.js';
import { builder } from '../../../kernel/schema/builder.js';
import { EntityRef } from '../../../kernel/schema/entity.js';
import { MemoryChangeKindEnum } from '../../../kernel/schema/enums.js';
import { FactRef } from '../../../kernel/schema/fact.js';
import { ObservationRef } from '../../../kernel/schema/observation.js';
import { SourceDocumentRef } from '../../documents/schema/index.js';

export const MemoryChangeRef = builder.objectRef<LiveChange>('MemoryChange').implement({
  description:
    'A row that changed after a write committed, read as the subscriber: hidden rows never arrive.',
  fields: (t) => ({
    namespace: t.exposeString('namespace'),
    kind: t.field({ type: MemoryChangeKindEnum, resolve: (c) => c.kind }),
    key: t.exposeString('id', {
      description: 'The entity or document key, the factId or the observationId.',
    }),
    removed: t.exposeBoolean('removed', {
      description:
        'The row was deleted (purged): the row fields are null. Told only to subscribers who could see it.',
    }),
    entity: t.field({ type: EntityRef, nullable: true, resolve: (c) => c.entity }),
    fact: t.field({ type: FactRef, nullable: true, resolve: (c) => c.fact }),
    observation: t.field({ type: ObservationRef, nullable: true, resolve: (c) => c.observation }),
    document: t.field({ type: SourceDocumentRef, nullable: true, resolve: (c) => c.document }),
  }),
});

type Delivery = LiveChange | Ending;

/** A failover or a restart is over within this, as a rule; reads failing longer end the subscription. */
const OUTAGE_RETRY_MS = 30_000;

/**
 * Reads one notice as the subscriber, again after a pause (250 ms, doubling to 2 s) while the
 * database is unreachable: a notice heard just before a failover is delivered once the
 * database answers, instead of ending the subscription. The stream waits meanwhile; later
 * notices queue behind it.
 */
async function readThroughOutage(
  ctx: Context,
  notice: PendingChange,
  entityKeys: readonly string[] | null | undefined,
): Promise<LiveChange | null> {
  const giveUpAt = performance.now() + OUTAGE_RETRY_MS;
  const signal = (ctx as { request?: Request }).request?.signal;
  for (let pause = 250; ; pause = Math.min(pause * 2, 2000)) {
    try {
      return await ctx.services.changes.read(notice, entityKeys);
    } catch (error) {
      if (!isDatabaseUnavailable(error) || signal?.aborted || performance.now() + pause > giveUpAt)
        throw error;
      await new Promise((resolve) => setTimeout(resolve, pause));
      ctx.refresh();
    }
  }
}

/**
 * Re-reads each notice as the subscriber with fresh loaders (on the context the event's fields
 * resolve with); hidden or filtered rows are skipped, and an event is delivered only while the
 * subscriber's credentials still hold.
 */
async function* visibleChanges(
  ctx: Context,
  notices: AsyncIterableIterator<PendingChange | Ending>,
  entityKeys: readonly string[] | null | undefined,
): AsyncGenerator<Delivery> {
  try {
    for await (const notice of notices) {
      if ('overflow' in notice || 'revoked' in notice || 'shutdown' in notice) {
        yield notice;
        return;
      }
      ctx.refresh();
      const change = await readThroughOutage(ctx, notice, entityKeys);
      if (!change) continue;
      if (ctx.authorizedNow && !ctx.authorizedNow()) {
        yield { revoked: true };
        return;
      }
      yield change;
    }
  } finally {
    await notices.return?.();
  }
}

/**
 * The stream a subscriber reads. Closing it closes the notice queue at once: an async
 * generator waiting for the next notice would otherwise only see its `return()` after one more
 * notice arrived, holding the subscription (its listener, queue and context) until then, or
 * for ever on a namespace nobody writes to.
 */
function closable(
  ctx: Context,
  notices: AsyncIterableIterator<PendingChange | Ending>,
  entityKeys: readonly string[] | null | undefined,
): AsyncIterableIterator<Delivery> {
  const deliveries = visibleChanges(ctx, notices, entityKeys);
  // The request going away (a client that left, a relay that completed) ends it too.
  const signal = (ctx as { request?: Request }).request?.signal;
  const stop = () => void notices.return?.();
  signal?.addEventListener('abort', stop, { once: true });
  const stream: AsyncIterableIterator<Delivery> = {
    next: () => deliveries.next(),
    async return() {
      signal?.removeEventListener('abort', stop);
      await notices.return?.();
      return deliveries.return(undefined);
    },
    async throw(error?: unknown) {
      await notices.return?.();
      return deliveries.throw(error);
    },
    [Symbol.asyncIterator]: () => stream,
  };
  return stream;
}

builder.subscriptionFields((t) => ({
  memoryChanged: t.field({
    type: MemoryChangeRef,
    description:
      'Entities, facts, observations and documents of one namespace as they change (after commit), ' +
      'whichever path wrote them (mutations, assertions, document links, snapshots, purges, imports), ' +
      'each read as the subscriber. A subscriber that falls too far behind gets LIMIT_EXCEEDED, one ' +
      'whose token is revoked gets UNAUTHENTICATED, one open while the server shuts down gets UNAVAILABLE, ' +
      'and the subscription ends.',
    args: {
      namespace: t.arg.string({ required: true }),
      kinds: t.arg({ type: [MemoryChangeKindEnum], required: false, description: 'Default: all kinds.' }),
      entityKeys: t.arg.stringList({
        required: false,
        description:
          'Only changes touching these entities: the entity or document itself, a fact with one as ' +
          'subject or object, an observation with one as subject or actor.',
      }),
    },
    subscribe: (_root, args, ctx) =>
      closable(
        ctx,
        ctx.services.changes.watch({
          namespace: args.namespace,
          kinds: args.kinds,
          entityKeys: args.entityKeys,
          stillAuthorized: ctx.stillAuthorized,
        }),
        args.entityKeys,
      ),
    resolve: (delivery: Delivery) => {
      if ('revoked' in delivery) {
        throw new MemgateError(
          'UNAUTHENTICATED',
          'The token of this subscription was revoked or its rights changed; the subscription ended.',
        );
      }
      if ('shutdown' in delivery) {
        throw new MemgateError(
          'UNAVAILABLE',
          'The server is shutting down; the subscription ended. Subscribe again, to this server once it is back or to another.',
        );
      }
      if ('overflow' in delivery) {
        throw new MemgateError(
          'LIMIT_EXCEEDED',
          `This subscriber fell behind: ${delivery.dropped} changes were dropped and the subscription ended. Re-read and subscribe again.`,
          { dropped: delivery.dropped },
        );
      }
      return delivery;
    },
  }),
}));
