import { describe, expect, it } from 'vitest';
import { chunkMarkdown } from '../../src/domain/chunking.js';
import { overlapLength, stitchChunks } from '../../src/modules/documents/document-service.js';

const asStored = (content: string, options?: { maxChars?: number; overlapChars?: number }) =>
  chunkMarkdown(content, options).map((c) => ({ order: c.order, heading: c.heading || null, text: c.text }));

describe('stitching chunks back into a document', () => {
  it('undoes the chunker: headings come back, overlaps are removed', () => {
    const para = (i: number) =>
      `Sentence ${i} says something about item ${i}. It goes on a little longer here.`;
    const body = Array.from({ length: 40 }, (_, i) => para(i)).join('\n\n');
    const doc = `Intro before any heading.\n\n# Guide\n\n${body}\n\n## Details\n\nSmall print.\n\n### Deeper\n\nDeep text.\n\n# Appendix\n\nThe end.`;
    const stored = asStored(doc, { maxChars: 300, overlapChars: 60 });
    expect(stored.length).toBeGreaterThan(10);
    expect(stitchChunks(stored)).toBe(doc);
  });

  it('works across word-level cuts inside one long paragraph', () => {
    const words = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ');
    const stored = asStored(words, { maxChars: 200, overlapChars: 50 });
    expect(stored.length).toBeGreaterThan(5);
    expect(stitchChunks(stored)).toBe(words);
  });

  it('joins chunks without an overlap by a blank line, and never eats a coincidental match mid-word', () => {
    expect(overlapLength('ends with the cat', 'cat sat')).toBe(3);
    expect(overlapLength('concat', 'cat sat')).toBe(0);
    expect(overlapLength('the cat', 'cats sat')).toBe(0);
    expect(
      stitchChunks([
        { order: 0, heading: null, text: 'First part.' },
        { order: 1, heading: null, text: 'Second part.' },
      ]),
    ).toBe('First part.\n\nSecond part.');
    expect(stitchChunks([])).toBe('');
  });
});
