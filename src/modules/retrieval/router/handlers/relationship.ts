import type { GraphPath } from '../../../graph/index.js';
import { type HandlerContext, type HandlerResult, emptyResult, withAnchors } from './types.js';

/**
 * RELATIONSHIP: connecting paths between the first two resolved entities (same namespace) and,
 * concurrently, the hybrid pack anchored on both — the facts and episodes that connect them.
 */
export async function handleRelationship(ctx: HandlerContext): Promise<HandlerResult> {
  const [a, b] = ctx.resolved;
  const notes: string[] = [];
  const pair = a && b && a.namespace === b.namespace && a.key !== b.key ? [a, b] : null;
  if (!pair) notes.push('entities_not_resolved');
  const [paths, pack] = await Promise.all([
    pair ? ctx.paths(pair[0]!.namespace, pair[0]!.key, pair[1]!.key) : Promise.resolve<GraphPath[]>([]),
    ctx.compile(
      withAnchors(
        ctx.base,
        ctx.resolved.map((e) => e.key),
      ),
    ),
  ]);
  if (pair && paths.length === 0) notes.push('no_connecting_path');
  return { ...emptyResult(pack), paths, notes };
}
