import type { LazyPage } from '../pagination.js';

/** totalCount of a page: given, or counted on demand (one batched statement), or unknown. */
export function lazyTotal<T>(page: LazyPage<T>): number | null | Promise<number> {
  if (page.totalCount != null) return page.totalCount;
  return page.countTotal ? page.countTotal() : null;
}

/** Connection arguments for a service: `last` wins over a defaulted `first`, as with `entities`. */
export function pageArgs(args: {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}) {
  return {
    first: args.last != null ? null : args.first,
    after: args.after,
    last: args.last,
    before: args.before,
  };
}
