import {
  type HandlerContext,
  type HandlerResult,
  emptyResult,
  noContentRequest,
  withAnchors,
} from './types.js';

/** EXPLORATORY and ASPECT: the hybrid pack, anchored on whatever entity hints resolved. */
export async function handleHybrid(ctx: HandlerContext): Promise<HandlerResult> {
  return emptyResult(
    await ctx.compile(
      withAnchors(
        ctx.base,
        ctx.resolved.map((e) => e.key),
      ),
    ),
  );
}

/** NO_SEARCH ("hello"): nothing is read; the traced pack holds at most the caller's CURRENT state. */
export async function handleNoSearch(ctx: HandlerContext): Promise<HandlerResult> {
  return emptyResult(await ctx.compile(noContentRequest(ctx.base)));
}
