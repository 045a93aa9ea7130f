import { assertCanRead } from '../../auth/principal.js';
import type { Context } from '../../context.js';
import { nsKey } from '../loaders.js';

/** Parses a node's local id (a JSON tuple starting with the namespace) and checks read access. */
export function namespacedLocalId(id: string, ctx: Context): [string, string] | null {
  try {
    const parts: unknown = JSON.parse(id);
    if (
      Array.isArray(parts) &&
      parts.length === 2 &&
      parts.every((p) => typeof p === 'string' || typeof p === 'number')
    ) {
      const namespace = String(parts[0]);
      assertCanRead(ctx.principal, namespace);
      return [namespace, String(parts[1])];
    }
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
  }
  return null;
}

/** Loads nodes through a per-request loader keyed by namespace + local key. */
export function loadNodes<T>(
  ids: readonly string[],
  ctx: Context,
  load: (key: string) => Promise<T | null>,
): Promise<(T | null)[]> {
  return Promise.all(
    ids.map((id) => {
      const parsed = namespacedLocalId(id, ctx);
      return parsed ? load(nsKey(parsed[0], parsed[1])) : null;
    }),
  );
}
