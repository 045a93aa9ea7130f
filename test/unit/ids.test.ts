import { describe, expect, it } from 'vitest';
import { canonicalJson, factId, observationId, sha256Hex } from '../../src/domain/ids.js';

describe('canonicalJson', () => {
  it('sorts keys at every depth and drops whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('gives the same text whatever the insertion order, numeric-looking keys included', () => {
    expect(canonicalJson({ b: 1, 10: 2, 9: 3 })).toBe(canonicalJson({ 9: 3, b: 1, 10: 2 }));
    expect(canonicalJson({ b: 1, 10: 2, 9: 3 })).toBe('{"10":2,"9":3,"b":1}');
  });

  it('follows JSON.stringify for undefined, dates and escaping', () => {
    expect(canonicalJson({ a: undefined, b: [undefined] })).toBe('{"b":[null]}');
    expect(canonicalJson(new Date('2024-01-02T03:04:05.000Z'))).toBe('"2024-01-02T03:04:05.000Z"');
    expect(canonicalJson('line\n"quoted"')).toBe('"line\\n\\"quoted\\""');
  });

  it('refuses values that JSON cannot represent faithfully', () => {
    expect(() => canonicalJson(Number.NaN)).toThrow(TypeError);
    expect(() => canonicalJson(10n)).toThrow(TypeError);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(/cyclic/);
  });
});

describe('sha256Hex', () => {
  it('hashes UTF-8 text to lower-case hex', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('factId', () => {
  const validFrom = new Date('2026-08-01T00:00:00Z');

  it('is fact- plus the first 24 hex of sha256(namespace|subject|predicate|object|validFromIso)', () => {
    const expected = sha256Hex('acme|person:alice|WORKS_ON|project:alpha|2026-08-01T00:00:00.000Z').slice(
      0,
      24,
    );
    expect(factId('acme', 'person:alice', 'WORKS_ON', 'project:alpha', validFrom)).toBe(`fact-${expected}`);
  });

  it('depends on every part, including the start of validity', () => {
    const base = factId('acme', 'person:alice', 'WORKS_ON', 'project:alpha', validFrom);
    expect(factId('other', 'person:alice', 'WORKS_ON', 'project:alpha', validFrom)).not.toBe(base);
    expect(factId('acme', 'person:alice', 'WORKS_ON', 'project:beta', validFrom)).not.toBe(base);
    expect(
      factId('acme', 'person:alice', 'WORKS_ON', 'project:alpha', new Date('2026-08-02T00:00:00Z')),
    ).not.toBe(base);
    expect(base).toMatch(/^fact-[0-9a-f]{24}$/);
  });
});

describe('observationId', () => {
  const content = { kind: 'task.completed', occurredAt: new Date('2026-08-01T10:00:00Z'), content: 'done' };

  it('with an external id, hashes the canonical array [namespace, system, stream, externalId]', () => {
    const id = observationId('acme', { system: 'jira', stream: 'ACME', externalId: 'ACME-1' }, content);
    const expected = sha256Hex('["acme","jira","ACME","ACME-1"]').slice(0, 24);
    expect(id).toBe(`obs-${expected}`);
  });

  it('with an external id, ignores the content: a redelivered event is the same observation', () => {
    const source = { system: 'jira', externalId: 'ACME-1' };
    expect(observationId('acme', source, content)).toBe(
      observationId('acme', source, { ...content, content: 'edited later' }),
    );
  });

  it('without an external id, hashes namespace, system, stream and the canonical content', () => {
    const id = observationId('acme', { system: 'mail' }, content);
    const expected = sha256Hex(
      '["acme","mail",null,{"content":"done","kind":"task.completed","occurredAt":"2026-08-01T10:00:00.000Z"}]',
    ).slice(0, 24);
    expect(id).toBe(`obs-${expected}`);
  });

  it('without an external id, treats the same instant in another offset and null members as identical', () => {
    const a = observationId('acme', { system: 'mail' }, content);
    const b = observationId(
      'acme',
      { system: 'mail', stream: '', externalId: '' },
      { ...content, occurredAt: '2026-08-01T13:00:00+03:00', data: null, actor: null },
    );
    expect(b).toBe(a);
  });

  it('without an external id, changes when content, data, actor or stream change', () => {
    const base = observationId('acme', { system: 'mail' }, content);
    expect(observationId('acme', { system: 'mail' }, { ...content, content: 'done!' })).not.toBe(base);
    expect(observationId('acme', { system: 'mail' }, { ...content, data: { n: 1 } })).not.toBe(base);
    expect(
      observationId('acme', { system: 'mail' }, { ...content, actor: { type: 'person', id: 'a' } }),
    ).not.toBe(base);
    expect(observationId('acme', { system: 'mail', stream: 'inbox' }, content)).not.toBe(base);
  });

  it('cannot be forged across fields by embedding separators in values', () => {
    const a = observationId('a', { system: 'b","c', externalId: 'd' }, content);
    const b = observationId('a', { system: 'b', stream: 'c', externalId: 'd' }, content);
    expect(a).not.toBe(b);
  });

  it('rejects an occurredAt that is not a valid instant', () => {
    expect(() =>
      observationId('acme', { system: 'mail' }, { ...content, occurredAt: '2024-02-30T00:00:00Z' }),
    ).toThrow(RangeError);
  });
});
