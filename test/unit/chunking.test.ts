import { describe, expect, it } from 'vitest';
import { chunkMarkdown, embeddingText } from '../../src/domain/chunking.js';

describe('chunkMarkdown', () => {
  it('splits by ATX headings and keeps the heading path', () => {
    const doc = [
      'Intro text.',
      '# Install',
      'General steps.',
      '## Linux',
      'apt install memgate',
      '### Debian ###',
      'works too',
      '## macOS',
      'brew install memgate',
      '# Usage',
      'memgate serve',
    ].join('\n');
    expect(chunkMarkdown(doc)).toEqual([
      { order: 0, heading: '', text: 'Intro text.' },
      { order: 1, heading: 'Install', text: 'General steps.' },
      { order: 2, heading: 'Install > Linux', text: 'apt install memgate' },
      { order: 3, heading: 'Install > Linux > Debian', text: 'works too' },
      { order: 4, heading: 'Install > macOS', text: 'brew install memgate' },
      { order: 5, heading: 'Usage', text: 'memgate serve' },
    ]);
  });

  it('skips empty sections instead of producing empty chunks', () => {
    expect(chunkMarkdown('# A\n\n## B\n\ntext\n\n# C\n   \n')).toEqual([
      { order: 0, heading: 'A > B', text: 'text' },
    ]);
    expect(chunkMarkdown('')).toEqual([]);
    expect(chunkMarkdown('  \n\n ')).toEqual([]);
  });

  it('keeps a headings-only document findable', () => {
    expect(chunkMarkdown('# Release 1.2')).toEqual([{ order: 0, heading: '', text: '# Release 1.2' }]);
  });

  it('handles plain text without headings and CRLF line ends', () => {
    expect(chunkMarkdown('first line\r\nsecond line')).toEqual([
      { order: 0, heading: '', text: 'first line\nsecond line' },
    ]);
  });

  it('does not treat # inside code fences or #hashtags as headings', () => {
    const doc = '# Script\n```bash\n# comment\necho hi\n```\n#hashtag';
    expect(chunkMarkdown(doc)).toEqual([
      { order: 0, heading: 'Script', text: '```bash\n# comment\necho hi\n```\n#hashtag' },
    ]);
  });

  it('caps long sections at maxChars on paragraph and sentence boundaries, with overlap', () => {
    const sentence = (i: number) => `Sentence number ${i} talks about deployments.`;
    const paragraph = (p: number) => Array.from({ length: 5 }, (_, i) => sentence(p * 5 + i)).join(' ');
    const doc = `# Ops\n${Array.from({ length: 8 }, (_, p) => paragraph(p)).join('\n\n')}`;
    const chunks = chunkMarkdown(doc, { maxChars: 300, overlapChars: 40 });
    expect(chunks.length).toBeGreaterThan(4);
    for (const chunk of chunks) {
      expect(chunk.heading).toBe('Ops');
      expect(chunk.text.length).toBeLessThanOrEqual(300);
      expect(chunk.text.trim()).toBe(chunk.text);
      expect(chunk.text).not.toBe('');
    }
    // Every sentence survives, and chunks after the first start with the previous chunk's tail.
    const all = chunks.map((c) => c.text).join('\n');
    for (let i = 0; i < 40; i++) expect(all).toContain(sentence(i));
    for (let i = 1; i < chunks.length; i++) {
      const firstWords = chunks[i]!.text.split(' ').slice(0, 2).join(' ');
      expect(chunks[i - 1]!.text).toContain(firstWords);
    }
    expect(chunks.map((c) => c.order)).toEqual(chunks.map((_, i) => i));
  });

  it('hard-splits a single over-long token and never splits a surrogate pair', () => {
    const chunks = chunkMarkdown('😀'.repeat(500), { maxChars: 101, overlapChars: 0 });
    for (const chunk of chunks) {
      expect(chunk.text.length).toBeLessThanOrEqual(101);
      expect(chunk.text).not.toMatch(/[\ud800-\udbff]$/);
    }
    expect(chunks.map((c) => c.text).join('')).toBe('😀'.repeat(500));
  });

  it('is deterministic', () => {
    const doc = `# A\n${'word '.repeat(2000)}\n## B\n${'слово. '.repeat(800)}`;
    expect(chunkMarkdown(doc)).toEqual(chunkMarkdown(doc));
  });

  it('rejects nonsensical options', () => {
    expect(() => chunkMarkdown('x', { maxChars: 0 })).toThrow(RangeError);
    expect(() => chunkMarkdown('x', { maxChars: 100, overlapChars: 60 })).toThrow(RangeError);
  });
});

describe('embeddingText', () => {
  it('is "<title> — <heading>\\n<text>"', () => {
    expect(embeddingText('Guide', 'Install > Linux', 'apt install')).toBe(
      'Guide — Install > Linux\napt install',
    );
  });

  it('omits the heading part when there is no heading', () => {
    expect(embeddingText('Guide', '', 'intro')).toBe('Guide\nintro');
    expect(embeddingText('Guide', null, 'intro')).toBe('Guide\nintro');
  });
});
