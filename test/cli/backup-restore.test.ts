import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { openPglite } from '../../src/db/pglite-database.js';
import { openPostgres } from '../../src/db/postgres-database.js';
import { type NamespaceDigest, checksums } from '../../src/modules/portability/export-service.js';
import { maskedUrl } from '../../src/cli/database-location.js';
import { cli, cliOk as ok } from '../helpers/cli.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { type SeededIds, readAll, sampleReads, seedMemory } from '../helpers/seed-memory.js';

/**
 * Backup → restore, export → import and move, each through the real CLI in a child process,
 * checked by digests and by byte-identical GraphQL reads. On the native pass (DATABASE_URL set)
 * copies go to fresh PostgreSQL databases and across backends (native backup into PGlite, PGlite
 * folder moved to native); without it, to fresh embedded folders.
 */
const nativeUrl = process.env.DATABASE_URL;
const root = mkdtempSync(join(tmpdir(), 'memgate-backup-'));
const cleanups: (() => Promise<void>)[] = [];

interface Place {
  env: Record<string, string>;
  open(): Promise<Database>;
  label: string;
}

function embeddedPlace(): Place {
  const dir = join(root, `folder-${randomBytes(4).toString('hex')}`);
  return {
    env: { MEMGATE_DATA_DIR: dir },
    open: () => openPglite({ dataDir: join(dir, 'pgdata') }),
    label: dir,
  };
}

async function nativePlace(): Promise<Place> {
  const name = `memgate_bk_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: nativeUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(nativeUrl!);
  url.pathname = `/${name}`;
  cleanups.push(async () => {
    const dropper = new pg.Client({ connectionString: nativeUrl });
    await dropper.connect();
    await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await dropper.end();
  });
  return {
    env: { DATABASE_URL: url.toString() },
    open: () => openPostgres({ connectionString: url.toString(), statementTimeoutMs: 30_000 }),
    label: name,
  };
}

/** A fresh database on the backend of this pass. */
const freshPlace = (): Promise<Place> => (nativeUrl ? nativePlace() : Promise.resolve(embeddedPlace()));

/** Digests and reads of a database, through a gateway started on it. */
async function observe(
  place: Place,
  queries: string[],
): Promise<{ digests: NamespaceDigest[]; reads: string[] }> {
  const db = await place.open();
  const digests = await checksums(db, null);
  const gw = await startTestGateway({ MEMGATE_TRACE_SQL: '0' }, { db });
  try {
    return { digests, reads: await readAll(gw, queries) };
  } finally {
    await gw.close();
  }
}

describe('backup, restore, export, import and move', () => {
  let gw: TestGateway;
  let ids: SeededIds;
  let queries: string[];
  let digests: NamespaceDigest[];
  let reads: string[];
  let restored: Place;
  const backupFile = join(root, 'memgate.sql');

  beforeAll(async () => {
    gw = await startTestGateway({ MEMGATE_TRACE_SQL: '0' });
    ids = await seedMemory(gw);
    queries = sampleReads(ids);
    digests = await checksums(gw.db, null);
    reads = await readAll(gw, queries);
  }, 120_000);

  afterAll(async () => {
    await gw?.close();
    for (const cleanup of cleanups) await cleanup();
    rmSync(root, { recursive: true, force: true });
  });

  it('seeds what the copies are compared on', () => {
    const byNs = new Map(digests.map((d) => [d.namespace, d]));
    expect(byNs.get('acme')!.records).toBeGreaterThan(20);
    expect(byNs.get('beta')!.records).toBeGreaterThan(0);
    expect(byNs.get('(domain packs)')!.records).toBe(1);
    for (const body of reads) expect(JSON.parse(body).errors).toBeUndefined();
    expect(reads.join('\n')).toContain('SUPERSEDED');
    expect(reads.join('\n')).toContain('RETRACTED');
    expect(reads.join('\n')).toContain('REDACTED');
    expect(reads.join('\n')).toContain('EVIDENCE_LOST');
  });

  it('backs up through the running gateway and restores into a fresh database', async () => {
    const out = await ok(['backup', '--out', backupFile, '--url', gw.url]);
    expect(out).toMatch(/backup of the gateway at .* written to .*: \d+(\.\d)? (B|kB|MB) in /);
    expect(readFileSync(backupFile, 'utf8')).toContain('PostgreSQL database dump complete');

    restored = await freshPlace();
    expect(await ok(['restore', backupFile], restored.env)).toMatch(/restored .* statements/);
    const copy = await observe(restored, queries);
    expect(copy.digests).toEqual(digests);
    expect(copy.reads).toEqual(reads);

    // A restore never merges into a database that has tables.
    const again = await cli(['restore', backupFile], restored.env);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/already has tables/);
  }, 240_000);

  it('prints the same digests from the CLI as from the original', async () => {
    const out = await ok(['export', '--checksum'], restored.env);
    const printed = out
      .trim()
      .split('\n')
      .map((line) => line.split('  '));
    expect(printed.map(([digest, namespace]) => ({ digest, namespace }))).toEqual(
      digests.map((d) => ({ digest: d.digest, namespace: d.namespace })),
    );
  }, 120_000);

  it('exports and imports namespaces exactly, and a second import changes nothing', async () => {
    const file = join(root, 'export.jsonl');
    expect(await ok(['export', '--out', file], restored.env)).toMatch(/exported 3 namespaces/);
    const lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; data?: Record<string, unknown> });
    expect(lines[0]).toMatchObject({
      type: 'header',
      format: 'memgate-export',
      namespaces: ['_system', 'acme', 'beta'],
    });
    expect(lines.at(-1)).toMatchObject({ type: 'end', records: lines.length - 2 });
    const types = new Set(lines.map((l) => l.type));
    for (const t of [
      'domain_pack',
      'namespace_settings',
      'entity',
      'entity_version',
      'observation',
      'mention',
      'fact',
      'chunk',
      'context_trace',
      'audit',
    ]) {
      expect(types, t).toContain(t);
    }
    const redacted = lines.find(
      (l) => l.type === 'observation' && l.data?.observation_id === ids.redactedObservation,
    );
    expect(redacted?.data).toMatchObject({ status: 'REDACTED', content: '[redacted]' });

    const target = await freshPlace();
    expect(await ok(['import', file], target.env)).toMatch(/records \(new \d+, already there 0\)/);
    expect(await ok(['import', file], target.env)).toMatch(/\(new 0, already there \d+\)/);
    const copy = await observe(target, queries);
    expect(copy.digests).toEqual(digests);
    expect(copy.reads).toEqual(reads);

    const one = join(root, 'beta.jsonl');
    await ok(['export', '--namespace', 'beta', '--out', one], restored.env);
    expect(statSync(one).size).toBeLessThan(statSync(file).size);
    const betaOnly = await freshPlace();
    await ok(['import', one], betaOnly.env);
    const betaDigest = digests.find((d) => d.namespace === 'beta');
    expect((await ok(['export', '--checksum', '--namespace', 'beta'], betaOnly.env)).split(/\s+/)[0]).toBe(
      betaDigest!.digest,
    );
  }, 240_000);

  it('moves an embedded folder into a fresh database with equal digests', async () => {
    // The source is always an embedded folder; on the native pass it comes from the native
    // backup (native → PGlite) and moves to native PostgreSQL (PGlite → native).
    const folder = embeddedPlace();
    await ok(['restore', backupFile], folder.env);
    const target = nativeUrl ? await nativePlace() : embeddedPlace();
    const to = nativeUrl ? target.env.DATABASE_URL! : target.env.MEMGATE_DATA_DIR!;
    const out = await ok(['move', '--to', to], folder.env);
    expect(out).toMatch(/digests equal on both sides: _system \(1 record\), acme \(\d+ records\), beta/);
    expect(out).toContain(
      nativeUrl ? `DATABASE_URL='${maskedUrl(to)}' npm start` : `MEMGATE_DATA_DIR='${to}' npm start`,
    );
    const copy = await observe(target, queries);
    expect(copy.digests).toEqual(digests);
    expect(copy.reads).toEqual(reads);
  }, 300_000);
});
