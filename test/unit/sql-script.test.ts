import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { sqlStatements } from '../../src/db/sql-script.js';
import { canonicalJson } from '../../src/modules/portability/export-service.js';

const split = async (script: string) => {
  const out: string[] = [];
  for await (const s of sqlStatements(Readable.from([script]))) out.push(s);
  return out;
};

describe('sqlStatements: splitting a pg_dump script', () => {
  it('ends statements at semicolons outside quotes, dollar quotes and comments', async () => {
    const script = [
      '--',
      '-- PostgreSQL database dump',
      '--',
      '\\restrict abc123',
      "SET client_encoding = 'UTF8';",
      'CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$',
      "BEGIN RAISE EXCEPTION 'no; really'; END $$;",
      "INSERT INTO t VALUES ('it''s; fine', 'two",
      'lines; here\', "odd;name", $tag$ $$ ; $tag$); -- trailing; comment',
      '/* a; block /* nested; */ comment */ SELECT 1;',
      'SELECT $1::text, a$b FROM x;',
      '\\unrestrict abc123',
      '',
    ].join('\n');
    expect(await split(script)).toEqual([
      "SET client_encoding = 'UTF8';",
      "CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN RAISE EXCEPTION 'no; really'; END $$;",
      "INSERT INTO t VALUES ('it''s; fine', 'two\nlines; here', \"odd;name\", $tag$ $$ ; $tag$);",
      '/* a; block /* nested; */ comment */ SELECT 1;',
      'SELECT $1::text, a$b FROM x;',
    ]);
  });

  it('refuses COPY blocks, which a backup never contains', async () => {
    await expect(split('COPY public.t (a) FROM stdin;\n1\n\\.\n')).rejects.toThrow(/--inserts/);
  });

  it('returns a last statement without its semicolon', async () => {
    expect(await split('SELECT 1;\nSELECT 2')).toEqual(['SELECT 1;', 'SELECT 2']);
  });
});

describe('canonicalJson', () => {
  it('is the same text whatever the key order', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(
      canonicalJson({ a: { c: null, d: [1, { x: 1, y: 2 }] }, b: 1 }),
    );
    expect(canonicalJson({ b: 1, a: 2 })).toBe('{"a":2,"b":1}');
  });
});
