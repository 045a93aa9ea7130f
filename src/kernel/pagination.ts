import { MemgateError, badInput } from '../errors.js';

export const MAX_PAGE_SIZE = 200;

export interface PageArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

export interface Page<T> {
  edges: { cursor: string; node: T }[];
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
  totalCount?: number | null;
}

/** Opaque, versioned cursors: base64url of a JSON tuple of the sort key values. */
export function encodeCursor(values: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(['c1', ...values]), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string, arity: number): (string | number)[] {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(parsed) &&
      parsed[0] === 'c1' &&
      parsed.length === arity + 1 &&
      parsed.slice(1).every((v) => typeof v === 'string' || typeof v === 'number')
    ) {
      return parsed.slice(1) as (string | number)[];
    }
  } catch {
    // fall through to the coded error
  }
  throw badInput('Invalid cursor: pass back a cursor this API returned.');
}

/** Resolves first/last into a direction and a limit, refusing sizes past the maximum. */
export function pageWindow(args: PageArgs, defaultSize = 20): { backwards: boolean; size: number } {
  if (args.first != null && args.last != null) throw badInput('Pass either first or last, not both.');
  const backwards = args.last != null;
  const size = (backwards ? args.last : args.first) ?? defaultSize;
  if (!Number.isInteger(size) || size < 0) throw badInput('first/last must be a non-negative integer.');
  if (size > MAX_PAGE_SIZE) {
    throw new MemgateError(
      'PAGE_SIZE_EXCEEDED',
      `Page size ${size} exceeds the maximum of ${MAX_PAGE_SIZE}.`,
      {
        max: MAX_PAGE_SIZE,
      },
    );
  }
  return { backwards, size };
}

/**
 * An edge whose cursor is encoded when first read. A class, so every edge shares one shape
 * and one getter: an object literal with its own accessor costs a property definition per
 * edge, and a walk builds hundreds of edges whose cursors nobody reads.
 */
class LazyEdge<T> {
  private encoded: string | undefined;
  constructor(
    readonly node: T,
    private readonly cursorOf: (row: T) => string,
  ) {}

  get cursor(): string {
    this.encoded ??= this.cursorOf(this.node);
    return this.encoded;
  }
}

/**
 * Builds a connection from rows fetched with one extra row (size + 1) to learn whether
 * another page exists, in the requested direction.
 */
export function toPage<T>(
  rows: T[],
  size: number,
  backwards: boolean,
  cursorOf: (row: T) => string,
  hadCursor: boolean,
): Page<T> {
  const hasMore = rows.length > size;
  const kept = backwards ? rows.slice(Math.max(0, rows.length - size)) : rows.slice(0, size);
  // Cursors are encoded when read: a nested walk selects none of its hundreds of edges' cursors.
  const edges: { cursor: string; node: T }[] = kept.map((node) => new LazyEdge(node, cursorOf));
  return {
    edges,
    pageInfo: {
      hasNextPage: backwards ? hadCursor : hasMore,
      hasPreviousPage: backwards ? hasMore : hadCursor,
      get startCursor() {
        return edges[0]?.cursor ?? null;
      },
      get endCursor() {
        return edges[edges.length - 1]?.cursor ?? null;
      },
    },
  };
}

/** A page whose total is counted only when a client asks for `totalCount` (one more statement). */
export type LazyPage<T> = Page<T> & { countTotal?: () => Promise<number> };
