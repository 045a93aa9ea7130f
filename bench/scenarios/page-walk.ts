import { SHAPES, type ShapeName } from '../peers/shapes.js';
import type { ReadScenario } from './types.js';

/** A read shape of the peer benchmark, as memgate asks for it, measured at one client. */
function peerShape(name: ShapeName, title: string): ReadScenario {
  const shape = SHAPES.find((s) => s.name === name);
  if (!shape) throw new Error(`no peer shape ${name}`);
  return {
    kind: 'read',
    name,
    title,
    document: shape.memgate,
    concurrency: [1],
    variables: (ds, i) => shape.variables(ds, i, null),
  };
}

/** The first page of 20 entities of the namespace, with its cursor. */
export const entityPage = peerShape('page', 'page of 20 entities (connection)');

/** An entity and three levels of its outgoing facts (10 × 10 × 5). */
export const factWalk = peerShape('walk', '3-level fact walk (10 × 10 × 5)');
