/**
 * The floor: the SQL statements memgate ran for a request, replayed one after another on a
 * node-postgres pool from a bare node:http server, with the rows as the JSON answer. No
 * GraphQL, no services: what any gateway over these statements must at least spend.
 *
 *   PEER_STATEMENTS=file.json DATABASE_URL=... npx tsx bench/peers/floor-server.ts
 *
 * The file maps a shape name to the statements of request 0, 1, … (as captured from memgate);
 * a POST body `{"shape": "walk", "i": 7}` replays request 7 mod their count. Prints
 * `{"port": N}` on its first stdout line when it listens.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';

export interface FloorStatement {
  sql: string;
  params: unknown[];
}
export type FloorPlan = Record<string, FloorStatement[][]>;

const file = process.env.PEER_STATEMENTS;
const connectionString = process.env.DATABASE_URL;
if (!file || !connectionString) throw new Error('PEER_STATEMENTS and DATABASE_URL are required');
const plan = JSON.parse(readFileSync(file, 'utf8')) as FloorPlan;
const pool = new pg.Pool({ connectionString, max: Number(process.env.PEER_POOL_MAX ?? 10) });

async function replay(statements: FloorStatement[]): Promise<unknown[][]> {
  const client = await pool.connect();
  try {
    const results: unknown[][] = [];
    for (const s of statements) results.push((await client.query(s.sql, s.params)).rows);
    return results;
  } finally {
    client.release();
  }
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const { shape, i } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { shape: string; i: number };
    const requests = plan[shape];
    if (!requests?.length) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ errors: [{ message: `no statements for ${shape}` }] }));
      return;
    }
    replay(requests[i % requests.length]!).then(
      (data) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ data }));
      },
      (error: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ errors: [{ message: error instanceof Error ? error.message : String(error) }] }),
        );
      },
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
const stop = () => {
  server.close();
  server.closeAllConnections();
  void pool.end().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
