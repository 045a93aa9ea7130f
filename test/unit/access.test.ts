import { describe, expect, it } from 'vitest';
import { LOCAL_PRINCIPAL, type Principal, canRead, canWrite, globMatches } from '../../src/auth/principal.js';
import { bindRequestPrincipal } from '../../src/auth/request-principal.js';
import { hashToken, parseTokensFile, toPrincipal } from '../../src/auth/tokens-file.js';
import { maskForPrincipal, maskJsonForPrincipal } from '../../src/security/pii-masking.js';

const reader: Principal = {
  id: 'r',
  read: ['support', 'team-*'],
  write: [],
  scopes: [],
  pii: false,
  admin: false,
};

describe('namespace globs', () => {
  it('match whole names with * as the only wildcard', () => {
    expect(globMatches('team-*', 'team-a')).toBe(true);
    expect(globMatches('team-*', 'team-')).toBe(true);
    expect(globMatches('team-*', 'xteam-a')).toBe(false);
    expect(globMatches('a.b', 'aXb')).toBe(false);
    expect(globMatches('*', 'anything')).toBe(true);
    expect(canRead(reader, 'support')).toBe(true);
    expect(canRead(reader, 'supportx')).toBe(false);
    expect(canWrite(reader, 'support')).toBe(false);
  });
});

describe('the tokens file', () => {
  const entry = { id: 'a', tokenSha256: hashToken('t'), read: ['x'] };
  it('fills defaults and maps "*" scopes to unrestricted', () => {
    const file = parseTokensFile(
      JSON.stringify({
        principals: [entry, { ...entry, id: 'b', tokenSha256: hashToken('u'), scopes: ['*'] }],
      }),
      'f',
    );
    expect(toPrincipal(file.principals[0]!)).toEqual({
      id: 'a',
      read: ['x'],
      write: [],
      scopes: [],
      pii: false,
      admin: false,
    });
    expect(toPrincipal(file.principals[1]!).scopes).toBeNull();
  });
  it('refuses plain tokens, unknown fields, duplicates and bad globs', () => {
    expect(() =>
      parseTokensFile(JSON.stringify({ principals: [{ ...entry, tokenSha256: 'secret' }] }), 'f'),
    ).toThrow(/tokenSha256/);
    expect(() => parseTokensFile(JSON.stringify({ principals: [{ ...entry, token: 'x' }] }), 'f')).toThrow();
    expect(() =>
      parseTokensFile(JSON.stringify({ principals: [entry, { ...entry, id: 'b' }] }), 'f'),
    ).toThrow(/share one token/);
    expect(() => parseTokensFile(JSON.stringify({ principals: [{ ...entry, read: ['a b'] }] }), 'f')).toThrow(
      /glob/,
    );
    expect(() =>
      parseTokensFile(JSON.stringify({ principals: [{ ...entry, scopes: ['nope'] }] }), 'f'),
    ).toThrow(/scope/);
  });
});

describe('maskForPrincipal', () => {
  const text = 'Mail alice@example.com or call +7 916 123-45-67.';
  it('masks for principals without pii and passes text through for those with it', () => {
    expect(maskForPrincipal(reader, text)).toBe('Mail [email] or call [phone].');
    expect(maskForPrincipal({ ...reader, pii: true }, text)).toBe(text);
    expect(maskJsonForPrincipal(reader, { a: [text], n: 1 })).toEqual({
      a: ['Mail [email] or call [phone].'],
      n: 1,
    });
  });
  it('records unmasked PII on the request principal, once per item, attributed to what it read', () => {
    const p = bindRequestPrincipal({ ...reader, pii: true });
    maskForPrincipal(p, text, { namespace: 'support', type: 'Chunk', id: 7, field: 'text' });
    maskForPrincipal(p, text, { namespace: 'support', type: 'Chunk', id: 7, field: 'title' });
    maskForPrincipal(p, 'no personal data here', { namespace: 'support', type: 'Chunk', id: 8 });
    maskForPrincipal(p, 'Jane Doe', {
      namespace: 'support',
      type: 'Entity',
      id: 'jane',
      flagged: true,
      categories: ['fio'],
    });
    const served = [...p.requestAudit!.piiServed.values()];
    expect(served.map((s) => [s.type, s.id, [...s.fields].sort(), [...s.categories].sort()])).toEqual([
      ['Chunk', '7', ['text', 'title'], ['email', 'phone']],
      ['Entity', 'jane', [], ['fio']],
    ]);
  });
  it('audits nothing in local mode', () => {
    const p = bindRequestPrincipal(LOCAL_PRINCIPAL);
    maskForPrincipal(p, text, { namespace: 'n', type: 'Chunk' });
    expect(p.requestAudit!.piiServed.size).toBe(0);
  });
});
