import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checksums } from '../../src/modules/portability/export-service.js';
import { reindex } from '../../src/modules/portability/reindex.js';
import { createHashingEmbedder } from '../../src/providers/hashing-embedder.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { TEST_EMBEDDING } from '../helpers/test-database.js';

/** `export --checksum` digests memory: re-deriving the indexes from the same records keeps it. */
describe('checksums cover memory, not the indexes derived from it', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
    const turns = Array.from({ length: 6 }, (_, i) => ({
      source: { system: 'chat', stream: 's1', externalId: `t${i}` },
      kind: 'message',
      occurredAt: new Date(Date.UTC(2024, 2, 1, 10, i)).toISOString(),
      content: `Alice says ${i}`,
    }));
    const written = await gw.gql(
      `mutation($o: [ObservationInput!]!) {
         upsertEntities(namespace: "c", entities: [{ key: "alice", kind: "person", title: "Alice" }]) { accepted }
         recordObservations(namespace: "c", observations: $o) { accepted }
         retainDocuments(namespace: "c", documents: [{ key: "doc:x", title: "X", content: "# X\\n\\nAlice wrote this." }]) { accepted }
       }`,
      { o: turns },
    );
    expect(written.errors).toBeUndefined();
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('reindex (vectors and contextual text derived again) leaves every digest as it was', async () => {
    const before = await checksums(gw.db, null);
    // The write path embeds a turn with its neighbours, reindex embeds its own text: the vectors change.
    const vectors = () => gw.db.query(`SELECT chunk_id, embedding::text FROM chunks ORDER BY chunk_id`);
    const vectorsBefore = (await vectors()).rows;
    const hashing = createHashingEmbedder(TEST_EMBEDDING.dimensions);
    await reindex(gw.db, { ...hashing, model: TEST_EMBEDDING.model, embed: (t) => hashing.embed(t) });
    expect((await vectors()).rows).not.toEqual(vectorsBefore);
    const after = await checksums(gw.db, null);
    expect(after.filter((d) => d.namespace === 'c')).toEqual(before.filter((d) => d.namespace === 'c'));
  });

  it('a change of memory still changes the digest', async () => {
    const before = await checksums(gw.db, ['c']);
    await gw.gql(
      `mutation { upsertEntities(namespace: "c", entities: [{ key: "alice", kind: "person", title: "Alice B." }]) { accepted } }`,
    );
    expect(await checksums(gw.db, ['c'])).not.toEqual(before);
  });
});
