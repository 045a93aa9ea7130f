import { createHash } from 'node:crypto';
import { parseDateTime } from './temporal.js';

/** A JSON value as it travels through GraphQL `JSON` scalars and `jsonb` columns. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * Canonical JSON: object keys sorted by UTF-16 code units (the RFC 8785 order), no whitespace,
 * strings escaped as `JSON.stringify` does. Like `JSON.stringify`, `toJSON()` is honoured (so a
 * Date becomes its ISO string), `undefined`/functions/symbols are dropped from objects and
 * become `null` in arrays. Unlike it, non-finite numbers, bigints and cycles throw: silently
 * turning them into `null` would make two different values hash alike.
 */
export function canonicalJson(value: unknown): string {
  const out = write(value, new Set());
  if (out === undefined) throw new TypeError('canonicalJson: value has no JSON form');
  return out;
}

function write(input: unknown, stack: Set<object>): string | undefined {
  let value = input;
  if (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { toJSON?: unknown }).toJSON === 'function'
  ) {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: non-finite number ${value}`);
      return JSON.stringify(value);
    case 'bigint':
      throw new TypeError('canonicalJson: bigint has no JSON form');
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    default:
      break;
  }
  if (value === null) return 'null';
  const obj = value as object;
  if (stack.has(obj)) throw new TypeError('canonicalJson: cyclic value');
  stack.add(obj);
  let out: string;
  if (Array.isArray(obj)) {
    out = `[${obj.map((item) => write(item, stack) ?? 'null').join(',')}]`;
  } else {
    const record = obj as Record<string, unknown>;
    const parts: string[] = [];
    for (const key of Object.keys(record).sort()) {
      const item = write(record[key], stack);
      if (item !== undefined) parts.push(`${JSON.stringify(key)}:${item}`);
    }
    out = `{${parts.join(',')}}`;
  }
  stack.delete(obj);
  return out;
}

/** Lower-case hex SHA-256 of a string (hashed as UTF-8) or of raw bytes. */
export function sha256Hex(input: string | Uint8Array): string {
  return createHash('sha256').update(input).digest('hex');
}

const ID_HEX_LENGTH = 24;

/**
 * `fact-` + first 24 hex of sha256(`namespace|subject|predicate|object|validFromIso`).
 * The pipe-joined layout is the documented contract (clients compute ids in advance), so it is
 * kept verbatim even though `|` inside a key could in theory collide; keys are `type:id` labels.
 * Throws RangeError for an invalid Date (from `toISOString`).
 */
export function factId(
  namespace: string,
  subject: string,
  predicate: string,
  object: string,
  validFrom: Date,
): string {
  const material = `${namespace}|${subject}|${predicate}|${object}|${validFrom.toISOString()}`;
  return `fact-${sha256Hex(material).slice(0, ID_HEX_LENGTH)}`;
}

export interface EntityRef {
  type: string;
  id: string;
}

export interface ObservationSource {
  system: string;
  stream?: string | null;
  externalId?: string | null;
}

export interface ObservationContentIdentity {
  kind: string;
  occurredAt: Date | string;
  content?: string | null;
  data?: unknown;
  actor?: EntityRef | null;
  subject?: EntityRef | null;
}

/**
 * `obs-` + first 24 hex of sha256 over the UTF-8 bytes of a canonical JSON array:
 *
 * - with an external id:    `[namespace, system, stream|null, externalId]`
 * - without an external id: `[namespace, system, stream|null, {actor?, content?, data?, kind,
 *   occurredAt, subject?}]` (canonical object: sorted keys, absent/null members omitted,
 *   occurredAt as UTC `toISOString()`).
 *
 * A JSON array is used as the separator because no string value can forge a `","` boundary
 * (quotes are escaped), and the 4th element is a string in one form and an object in the other,
 * so the two forms cannot collide. Empty `stream`/`externalId` strings count as absent: an empty
 * id identifies nothing. Throws RangeError when `occurredAt` is not a valid instant.
 */
export function observationId(
  namespace: string,
  source: ObservationSource,
  content: ObservationContentIdentity,
): string {
  const stream = source.stream ? source.stream : null;
  const identity = source.externalId
    ? [namespace, source.system, stream, source.externalId]
    : [namespace, source.system, stream, contentIdentity(content)];
  return `obs-${sha256Hex(canonicalJson(identity)).slice(0, ID_HEX_LENGTH)}`;
}

function contentIdentity(content: ObservationContentIdentity): Record<string, unknown> {
  const identity: Record<string, unknown> = {
    kind: content.kind,
    occurredAt: normalizeInstant(content.occurredAt),
  };
  // null and absent mean the same thing to a caller, so they must hash the same.
  if (content.content != null) identity.content = content.content;
  if (content.data != null) identity.data = content.data;
  if (content.actor != null) identity.actor = { type: content.actor.type, id: content.actor.id };
  if (content.subject != null) identity.subject = { type: content.subject.type, id: content.subject.id };
  return identity;
}

// The same instant written with another offset is the same event.
function normalizeInstant(value: Date | string): string {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new RangeError('observationId: occurredAt is an invalid Date');
    return value.toISOString();
  }
  const parsed = parseDateTime(value);
  if (!parsed.ok) throw new RangeError(`observationId: occurredAt ${parsed.error.message}`);
  return parsed.value.toISOString();
}
