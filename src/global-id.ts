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
