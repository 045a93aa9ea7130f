import { describe, expect, it } from 'vitest';
import { JsonSchemaError, compileJsonSchema, formatIssues } from '../../src/domain/json-schema.js';

describe('JSON Schema subset', () => {
  const validate = compileJsonSchema({
    type: 'object',
    required: ['method', 'path'],
    additionalProperties: false,
    properties: {
      method: { enum: ['GET', 'POST'] },
      path: { type: 'string', pattern: '^/', minLength: 2, maxLength: 100 },
      port: { type: 'integer', minimum: 1, maximum: 65535 },
      ratio: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
      tags: { type: 'array', items: { type: 'string' }, maxItems: 3 },
      owner: { type: ['string', 'null'] },
      meta: { type: 'object', additionalProperties: { type: 'string' } },
      version: { const: 2 },
    },
  });

  it('accepts a valid value', () => {
    expect(
      validate({
        method: 'GET',
        path: '/runs',
        port: 443,
        ratio: 0.5,
        tags: ['a'],
        owner: null,
        meta: { a: 'b' },
        version: 2,
      }),
    ).toEqual([]);
  });

  it('reports every violation with a JSON Pointer', () => {
    const issues = validate({
      method: 'PUT',
      path: 'runs',
      port: 70000.5,
      ratio: 1,
      tags: ['a', 2, 'c', 'd'],
      meta: { x: 1 },
      extra: true,
      version: 3,
    });
    const byPath: Record<string, string> = {};
    for (const i of issues) byPath[i.path] = byPath[i.path] ? `${byPath[i.path]}; ${i.message}` : i.message;
    expect(byPath['/method']).toMatch(/one of "GET", "POST"/);
    expect(byPath['/path']).toMatch(/pattern/);
    expect(byPath['/port']).toBe('must be integer, got number; must be <= 65535');
    expect(byPath['/ratio']).toBe('must be < 1');
    expect(byPath['/tags']).toMatch(/at most 3 items/);
    expect(byPath['/tags/1']).toMatch(/must be string, got integer/);
    expect(byPath['/meta/x']).toMatch(/string/);
    expect(byPath['/extra']).toBe('is not an allowed property');
    expect(byPath['/version']).toBe('must equal 2');
    expect(validate({})).toEqual([
      { path: '/method', message: 'is required' },
      { path: '/path', message: 'is required' },
    ]);
    expect(formatIssues(validate({ method: 'GET', path: '/a', port: 0 }), 'attributes')).toBe(
      'attributes/port must be >= 1',
    );
  });

  it('counts length in code points', () => {
    const v = compileJsonSchema({ type: 'string', maxLength: 2 });
    expect(v('😀😀')).toEqual([]);
    expect(v('abc')).toHaveLength(1);
  });

  it('refuses unsupported keywords, bad shapes and unsafe patterns when compiling', () => {
    expect(() => compileJsonSchema({ oneOf: [] })).toThrow(JsonSchemaError);
    expect(() => compileJsonSchema({ oneOf: [] })).toThrow(/unsupported keyword "oneOf"/);
    expect(() => compileJsonSchema({ type: 'strin' })).toThrow(/type must be one of/);
    expect(() => compileJsonSchema({ properties: { a: { minLength: -1 } } })).toThrow(
      /\/properties\/a\/minLength/,
    );
    expect(() => compileJsonSchema({ type: 'string', pattern: 'x(?=y)' })).toThrow(
      /lookarounds are not supported/,
    );
    expect(() =>
      compileJsonSchema({ title: 'x', description: 'y', $schema: 'z', default: 1, examples: [] }),
    ).not.toThrow();
  });

  it('true and false schemas', () => {
    expect(compileJsonSchema(true)(42)).toEqual([]);
    expect(compileJsonSchema(false)(42)).toHaveLength(1);
  });
});
