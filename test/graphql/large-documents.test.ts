import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateDocument } from '../../bench/big-write.js';
import { chunkMarkdown } from '../../src/domain/chunking.js';
import { CHUNKS_PER_STEP } from '../../src/modules/documents/document-steps.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { deleteChunks } from '../helpers/postings.js';

/**
 * A document with many chunks is written in bounded transactions (the entity and its text
 * first, then CHUNKS_PER_STEP chunks per step) so other requests are answered meanwhile; it is
 * UNCHANGED only once every chunk is in.
 */
const NS = 'large';
const RETAIN = `mutation($d: [DocumentInput!]!) { retainDocuments(namespace: "${NS}", documents: $d) {
  results { status code message } } }`;
const PROBE = `{ entity(namespace: "${NS}", key: "probe") { title } }`;

type Retained = {
  retainDocuments: { results: { status: string; code: string | null; message: string | null }[] };
};

describe('large documents are written in steps', () => {
  let gw: TestGateway;
  const content = generateDocument(240_000);
  const expectedChunks = chunkMarkdown(content).length;

  beforeAll(async () => {
    gw = await startTestGateway();
    await gw.gql(
      `mutation { upsertEntities(namespace: "${NS}", entities: [{ key: "probe", kind: "thing", title: "Probe" }]) { accepted } }`,
    );
  });
  afterAll(async () => {
    await gw?.close();
  });

  const chunkCount = async () =>
    (
      await gw.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM chunks WHERE namespace = '${NS}' AND node_key = 'doc:big'`,
      )
    ).rows[0]!.n;

  it('answers other requests while the document is written, and ends with every chunk', async () => {
    expect(expectedChunks).toBeGreaterThan(4 * CHUNKS_PER_STEP);
    let writeDone = false;
    const write = gw.gql<Retained>(RETAIN, { d: [{ key: 'doc:big', title: 'Big', content }] }).then((r) => {
      writeDone = true;
      return r;
    });
    const answeredDuringWrite: number[] = [];
    while (!writeDone) {
      const probe = await gw.gql<{ entity: { title: string } }>(PROBE);
      expect(probe.data?.entity.title).toBe('Probe');
      if (!writeDone) answeredDuringWrite.push(await chunkCount());
    }
    const written = await write;
    expect(written.data?.retainDocuments.results).toEqual([{ status: 'CREATED', code: null, message: null }]);
    // Reads got in between the steps, and saw the chunks arrive in parts.
    expect(answeredDuringWrite.length).toBeGreaterThan(1);
    expect(answeredDuringWrite.some((n) => n > 0 && n < expectedChunks)).toBe(true);
    expect(await chunkCount()).toBe(expectedChunks);
    const again = await gw.gql<Retained>(RETAIN, { d: [{ key: 'doc:big', title: 'Big', content }] });
    expect(again.data?.retainDocuments.results[0]?.status).toBe('UNCHANGED');
  });

  it('refuses a second write of the same document while the first is in steps', async () => {
    const next = `${content}\n\n## Appendix\n\nOne more paragraph.`;
    const [first, second] = await Promise.all([
      gw.gql<Retained>(RETAIN, { d: [{ key: 'doc:big', title: 'Big', content: next }] }),
      new Promise((r) => setTimeout(r, 50)).then(() =>
        gw.gql<Retained>(RETAIN, { d: [{ key: 'doc:big', title: 'Big', content: `${next} Two.` }] }),
      ),
    ]);
    expect(first.data?.retainDocuments.results[0]?.status).toBe('UPDATED');
    expect(second.data?.retainDocuments.results[0]).toMatchObject({ status: 'REJECTED', code: 'CONFLICT' });
    expect(await chunkCount()).toBe(chunkMarkdown(next).length);
  });

  it('a write that stopped midway is not taken for UNCHANGED: sending it again finishes it', async () => {
    // What a crash between steps leaves: the text stored, part of the chunks, no content hash.
    await gw.db.query(
      `UPDATE entities SET content_hash = NULL WHERE namespace = '${NS}' AND key = 'doc:big'`,
    );
    await deleteChunks(
      gw.db,
      `c.namespace = '${NS}' AND c.node_key = 'doc:big' AND c.ord > ${CHUNKS_PER_STEP}`,
    );
    const next = `${content}\n\n## Appendix\n\nOne more paragraph.`;
    const resent = await gw.gql<Retained>(RETAIN, { d: [{ key: 'doc:big', title: 'Big', content: next }] });
    expect(resent.data?.retainDocuments.results[0]?.status).toBe('UPDATED');
    expect(await chunkCount()).toBe(chunkMarkdown(next).length);
  });
});
