import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { startEmbeddingServer } from '../../bench/peers/embedding-server.js';
import {
  type Rounds,
  type Sample,
  addSample,
  meetsTargets,
  medianRatio,
  shapeRatios,
} from '../../bench/peers/measure.js';
import { PEER_NODE } from '../../bench/peers/processes.js';
import { parsePeerArgs } from '../../bench/peers/run.js';
import { SHAPES } from '../../bench/peers/shapes.js';
import { createHashingEmbedder } from '../../src/providers/hashing-embedder.js';

const sample = (p50: number, rps: number, statements: number | null = null): Sample => ({
  p50,
  p95: p50 * 2,
  rps,
  errors: 0,
  statements,
});

describe('bench:peers ratios', () => {
  it('pairs the rounds and reports the median of the per-round ratios', () => {
    // Round 2 is slow for both sides (a busy machine): its ratio is still 2.
    const a = [sample(2, 0), sample(20, 0), sample(3, 0)];
    const b = [sample(1, 0), sample(10, 0), sample(1, 0)];
    expect(medianRatio(a, b, (s) => s.p50)).toBe(2);
    expect(medianRatio(a, [], (s) => s.p50)).toBeNull();
  });

  it('derives every ratio of a shape and checks it against the targets', () => {
    const rounds: Rounds = {};
    for (let r = 0; r < 3; r++) {
      addSample(rounds, 'entity', 1, 'memgate', sample(1.1, 900, 1));
      addSample(rounds, 'entity', 1, 'postgraphile', sample(1, 1000));
      addSample(rounds, 'entity', 1, 'floor', sample(0.9, 1100));
      addSample(rounds, 'entity', 32, 'memgate', sample(10, 2700, 1));
      addSample(rounds, 'entity', 32, 'postgraphile', sample(9, 3000));
      addSample(rounds, 'entity', 32, 'floor', sample(8, 4000));
    }
    const ratios = shapeRatios(rounds, 'entity', 'entity by key', 1, 32);
    expect(ratios.p50VsPostgraphile).toBe(1.1);
    expect(ratios.p50VsFloor).toBe(1.22);
    expect(ratios.throughputVsPostgraphile).toBe(0.9);
    expect(ratios.throughputVsFloor).toBe(0.675);
    expect(ratios.statementsPerRequest).toBe(1);
    expect(meetsTargets(ratios)).toBe(true);
    expect(meetsTargets({ ...ratios, statementsPerRequest: 3 })).toBe(false);
    expect(meetsTargets({ ...ratios, p50VsFloor: null })).toBeNull();
  });

  it('has the four shapes and a quick mode for smoke runs', () => {
    expect(SHAPES.map((s) => s.name)).toEqual(['entity', 'page', 'facts', 'walk']);
    expect(parsePeerArgs(['--quick'])).toMatchObject({ size: 'quick', rounds: 1 });
    expect(parsePeerArgs(['--size', 'l', '--rounds', '3'])).toMatchObject({ size: 'L', rounds: 3 });
    expect(() => parsePeerArgs(['--size', 'M'])).toThrow(/S or L/);
    // memgate on the bench's own Node unless asked to run on the peers' one.
    expect(parsePeerArgs([]).memgateNode).toBe(process.execPath);
    expect(parsePeerArgs(['--memgate-node', 'peer']).memgateNode).toBe(PEER_NODE);
  });
});

describe('bench:peers embedding server', () => {
  it('answers an OpenAI client: stored vectors for known texts, the embedder for the rest', async () => {
    const embedder = createHashingEmbedder(16);
    const stored = Array.from({ length: 16 }, (_, i) => (i === 0 ? 1 : 0));
    const server = await startEmbeddingServer(embedder, new Map([['a stored chunk', stored]]));
    try {
      const client = new OpenAI({ apiKey: 'local', baseURL: server.url });
      // As mem0 asks: floats, exactly the stored or embedded vector.
      const answer = await client.embeddings.create({
        model: 'bench',
        input: ['a stored chunk', 'a query'],
        encoding_format: 'float',
      });
      expect(answer.data.map((d) => d.index)).toEqual([0, 1]);
      expect(answer.data[0]!.embedding).toEqual(stored);
      expect(answer.data[1]!.embedding).toEqual((await embedder.embed(['a query']))[0]);
      // The client's default: base64 of float32, decoded by the client.
      const single = await client.embeddings.create({ model: 'bench', input: 'a stored chunk' });
      expect(single.data).toHaveLength(1);
      expect(single.data[0]!.embedding).toEqual(stored);
    } finally {
      await server.close();
    }
  });
});
