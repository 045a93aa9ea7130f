import { unstorableText } from './domain/storable-text.js';
import { badInput } from './errors.js';

/**
 * Relay global ids: base64 of `Typename:localId`. Local ids carry the namespace with the key
 * as a JSON tuple, so any key round-trips and a node lookup knows its namespace.
 */
export function encodeGlobalId(typename: string, localId: string | number | bigint): string {
  return Buffer.from(`${typename}:${String(localId)}`, 'utf8').toString('base64');
}

/** Throws BAD_USER_INPUT for anything that is not an id this API issued. */
export function decodeGlobalId(id: string): { typename: string; id: string } {
  const text = /^[A-Za-z0-9+/]+={0,2}$/.test(id) ? Buffer.from(id, 'base64').toString('utf8') : '';
  const colon = text.indexOf(':');
  if (colon <= 0 || !/^[A-Z][A-Za-z]*$/.test(text.slice(0, colon))) {
    throw badInput(`"${id.slice(0, 80)}" is not a global id issued by this API.`);
  }
  return { typename: text.slice(0, colon), id: text.slice(colon + 1) };
}

export function globalId(typename: string, ...parts: (string | number)[]): string {
  return encodeGlobalId(typename, JSON.stringify(parts));
}

export function parseGlobalId(id: string): { typename: string; parts: (string | number)[] } | null {
  try {
    const { typename, id: local } = decodeGlobalId(id);
    const parts: unknown = JSON.parse(local);
    if (!Array.isArray(parts) || !parts.every((p) => typeof p === 'string' || typeof p === 'number'))
      return null;
    return { typename, parts };
  } catch {
    return null;
  }
}

/** The types `node(id:)` resolves; every other typename (AuditEntry, Query…) is refused. */
export const NODE_TYPENAMES = ['Chunk', 'Entity', 'Fact', 'Observation'] as const;
export type NodeTypename = (typeof NODE_TYPENAMES)[number];

/** Chunk ids are bigserials the API prints as JSON numbers; beyond 2^53 no issued id exists. */
const CHUNK_ID = /^\d{1,15}$/;

export interface NodeId {
  typename: NodeTypename;
  namespace: string;
  key: string;
}

/**
 * The one check every node lookup goes through: a global id of a Node type whose local id is
 * `[namespace, key]` with text PostgreSQL can store, and for a Chunk an integer in range.
 * Anything else is the caller's mistake (BAD_USER_INPUT), decided before any SQL runs.
 */
export function parseNodeId(id: string): NodeId {
  const shown = JSON.stringify(id.slice(0, 80));
  const parsed = parseGlobalId(id);
  if (parsed?.parts.length !== 2 || typeof parsed.parts[0] !== 'string') {
    throw badInput(`${shown} is not a global id issued by this API.`);
  }
  if (!(NODE_TYPENAMES as readonly string[]).includes(parsed.typename)) {
    throw badInput(
      `${shown} is the id of a ${parsed.typename}, not of a node (${NODE_TYPENAMES.join(', ')}).`,
    );
  }
  const [namespace, local] = parsed.parts as [string, string | number];
  const key = String(local);
  for (const text of [namespace, key]) {
    const problem = unstorableText(text);
    if (problem) throw badInput(`${shown}: ${problem}`);
  }
  if (parsed.typename === 'Chunk' && !CHUNK_ID.test(key)) {
    throw badInput(`${shown}: a chunk id is a whole number below 10^15.`);
  }
  return { typename: parsed.typename as NodeTypename, namespace, key };
}

/** decodeGlobalId for node lookups: the same result, after parseNodeId accepted the id. */
export function decodeNodeGlobalId(id: string): { typename: string; id: string } {
  parseNodeId(id);
  return decodeGlobalId(id);
}
