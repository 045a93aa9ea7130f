import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config.js';
import type { Queryable } from '../../src/db/database.js';
import { formatLsn, nodeName, parseLsn, readingPrimary } from '../../src/db/read-replicas.js';
import { databaseUnavailable } from '../../src/db/unavailable.js';

describe('WAL positions', () => {
  it('reads and prints an LSN as PostgreSQL does, ordered as numbers', () => {
    expect(parseLsn('16/B374D848')).toBe((0x16n << 32n) | 0xb374d848n);
    expect(formatLsn(parseLsn('0/16B3748')!)).toBe('0/16B3748');
    expect(parseLsn('1/0')! > parseLsn('0/FFFFFFFF')!).toBe(true);
  });

  it('refuses anything else', () => {
    for (const text of ['', 'yesterday', '0/', '/1', '1/2/3', '123456789/0', null, undefined]) {
      expect(parseLsn(text)).toBeNull();
    }
  });

  it('names a node without its credentials', () => {
    expect(nodeName('postgres://u:secret@db-2.internal:6432/memgate')).toBe('db-2.internal:6432/memgate');
  });
});

describe('read replica settings', () => {
  it('lists the replicas of MEMGATE_READ_DATABASE_URLS', () => {
    const config = parseConfig({
      DATABASE_URL: 'postgres://a/m',
      MEMGATE_READ_DATABASE_URLS: 'postgres://b/m, postgresql://c/m',
    });
    expect(config.readDatabaseUrls).toEqual(['postgres://b/m', 'postgresql://c/m']);
    expect(config.readYourWritesMs).toBe(10_000);
  });

  it('refuses replicas without a primary, and URLs that are not PostgreSQL', () => {
    expect(() => parseConfig({ MEMGATE_READ_DATABASE_URLS: 'postgres://b/m' })).toThrow(ConfigError);
    expect(() =>
      parseConfig({ DATABASE_URL: 'postgres://a/m', MEMGATE_READ_DATABASE_URLS: 'mysql://b/m' }),
    ).toThrow(/each must be a postgres/);
  });
});

describe('a query operation on the primary', () => {
  /** A node whose statements fail with `failures`, one each, then answer. */
  const flaky = (failures: unknown[]) => {
    const calls: string[] = [];
    const node: Queryable = {
      query: async <R>(sql: string) => {
        calls.push(sql);
        const failure = failures.shift();
        if (failure) throw failure;
        return { rows: [] as R[], rowCount: 0 };
      },
    };
    return { node, calls };
  };

  it('runs a statement whose connection was lost once more, on a fresh connection', async () => {
    const { node, calls } = flaky([databaseUnavailable()]);
    await expect(readingPrimary(node).query('SELECT 1')).resolves.toMatchObject({ rowCount: 0 });
    expect(calls).toEqual(['SELECT 1', 'SELECT 1']);
  });

  it('answers UNAVAILABLE when the retry is lost too, and never retries a failed statement', async () => {
    const twice = flaky([databaseUnavailable(), databaseUnavailable()]);
    await expect(readingPrimary(twice.node).query('SELECT 1')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(twice.calls).toHaveLength(2);
    const wrong = flaky([Object.assign(new Error('division by zero'), { code: '22012' })]);
    await expect(readingPrimary(wrong.node).query('SELECT 1/0')).rejects.toThrow(/division by zero/);
    expect(wrong.calls).toHaveLength(1);
  });
});
