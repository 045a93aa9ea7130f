import { z } from 'zod';
import { badInput, parseInput } from '../errors.js';
import { type PageArgs, decodeCursor, encodeCursor, pageWindow } from './pagination.js';
import type { Direction, EntityFactsQuery, TimeCursor } from './store/graph-store.js';

/** The arguments of Entity.facts, shared by the graph reads and the nested (prefetched) reads. */
export const predicatesSchema = z
  .array(z.string().min(1).max(256))
  .max(50, 'at most 50 predicates')
  .nullish()
  .transform((p) => (p?.length ? [...new Set(p)].sort() : null));

export const entityFactsArgs = z.object({
  asOf: z.date().nullish(),
  predicates: predicatesSchema,
  direction: z.enum(['OUT', 'IN', 'BOTH']).nullish(),
  includeHistory: z.boolean().nullish(),
});

export interface EntityFactsArgs {
  asOf?: Date | null;
  predicates?: string[] | null;
  direction?: Direction | null;
  includeHistory?: boolean | null;
}

/** The validated arguments of Entity.facts as the statement takes them; throws on bad input. */
export function entityFactsQuery(
  args: EntityFactsArgs,
  page: PageArgs,
): { filter: Omit<EntityFactsQuery, 'limit' | 'cursor' | 'backwards'>; query: EntityFactsQuery } {
  const a = parseInput(entityFactsArgs, args, 'facts arguments');
  const { backwards, size, cursor } = timeWindow(page);
  const filter = {
    asOf: a.asOf ?? null,
    predicates: a.predicates,
    direction: a.direction ?? 'BOTH',
    includeHistory: a.includeHistory ?? false,
  };
  return { filter, query: { ...filter, limit: size + 1, cursor, backwards } };
}

/** first/last and the decoded time cursor of a newest-first page. */
export function timeWindow(page: PageArgs): { backwards: boolean; size: number; cursor: TimeCursor | null } {
  const { backwards, size } = pageWindow(page);
  const raw = backwards ? page.before : page.after;
  if (!raw) return { backwards, size, cursor: null };
  const [micros, id] = decodeCursor(raw, 2);
  if (typeof micros !== 'string' || !/^-?\d{1,19}$/.test(micros) || typeof id !== 'string') {
    throw badInput('Invalid cursor: pass back a cursor this API returned.');
  }
  return { backwards, size, cursor: { micros, id } };
}

/** A page of observations: its cursor's second part is the arrival number, not an id. */
export function arrivalWindow(page: PageArgs): ReturnType<typeof timeWindow> {
  const window = timeWindow(page);
  if (window.cursor && !/^\d{1,18}$/.test(window.cursor.id)) {
    throw badInput('Invalid cursor: pass back a cursor this API returned.');
  }
  return window;
}

export function timeCursor(micros: string, id: string): string {
  return encodeCursor([micros, id]);
}
