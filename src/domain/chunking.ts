/**
 * Markdown chunking for `retainDocuments`. Sections follow ATX headings so every chunk knows
 * where it sits (`Install > Linux`); long sections are cut on the gentlest boundary that fits
 * (blank line, line, sentence, word, and only then mid-word), with a small overlap so a fact
 * spanning a cut is still found from either side.
 */

export interface Chunk {
  /** 0-based position in the document; stable for the same input and options. */
  order: number;
  /** Heading path, `''` before the first heading. */
  heading: string;
  text: string;
}

export interface ChunkOptions {
  /** Upper bound of a chunk's length in UTF-16 units. */
  maxChars?: number;
  /** Tail of the previous chunk of the same section repeated at the start of the next one. */
  overlapChars?: number;
}

export const DEFAULT_MAX_CHARS = 1200;
export const DEFAULT_OVERLAP_CHARS = 120;
export const HEADING_SEPARATOR = ' > ';

/** Splits Markdown (or plain text) into heading-scoped chunks of at most `maxChars`. */
export function chunkMarkdown(content: string, options: ChunkOptions = {}): Chunk[] {
  const maxChars = options.maxChars ?? DEFAULT_MAX_CHARS;
  const overlapChars = options.overlapChars ?? DEFAULT_OVERLAP_CHARS;
  if (!Number.isInteger(maxChars) || maxChars < 1)
    throw new RangeError('maxChars must be a positive integer');
  if (!Number.isInteger(overlapChars) || overlapChars < 0 || overlapChars * 2 > maxChars) {
    throw new RangeError('overlapChars must be an integer between 0 and maxChars / 2');
  }
  const chunks: Chunk[] = [];
  for (const section of splitSections(content.replace(/\r\n?/g, '\n'))) {
    for (const text of packSection(section.body, maxChars, overlapChars)) {
      chunks.push({ order: chunks.length, heading: section.heading, text });
    }
  }
  // A document made of headings only is still worth finding by them.
  if (chunks.length === 0 && content.trim() !== '') {
    return packSection(content.trim(), maxChars, overlapChars).map((text, order) => ({
      order,
      heading: '',
      text,
    }));
  }
  return chunks;
}

/** The text that gets embedded: `"<title> — <heading>\n<text>"`, without ` — ` when a part is missing. */
export function embeddingText(title: string, heading: string | null | undefined, text: string): string {
  const head = [title.trim(), (heading ?? '').trim()].filter((part) => part !== '').join(' — ');
  return head ? `${head}\n${text}` : text;
}

interface Section {
  heading: string;
  body: string;
}

const ATX_HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

function splitSections(content: string): Section[] {
  const sections: Section[] = [];
  const path: string[] = [];
  let heading = '';
  let body: string[] = [];
  let fence: string | null = null;
  for (const line of content.split('\n')) {
    const fenceMatch = FENCE.exec(line);
    if (fenceMatch) {
      const marker = fenceMatch[1]!;
      // A fence closes only with the same character, at least as long; `#` inside code is code.
      if (fence === null) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = null;
    }
    const match = fence === null ? ATX_HEADING.exec(line) : null;
    if (!match) {
      body.push(line);
      continue;
    }
    sections.push({ heading, body: body.join('\n') });
    body = [];
    const level = match[1]!.length;
    path.length = Math.min(path.length, level - 1);
    while (path.length < level - 1) path.push('');
    path.push((match[2] ?? '').trim());
    heading = path.filter((part) => part !== '').join(HEADING_SEPARATOR);
  }
  sections.push({ heading, body: body.join('\n') });
  return sections;
}

interface Piece {
  text: string;
  /** What joins this piece to the previous one when both land in one chunk. */
  joiner: string;
}

function packSection(body: string, maxChars: number, overlapChars: number): string[] {
  const trimmed = body.trim();
  if (trimmed === '') return [];
  if (trimmed.length <= maxChars) return [trimmed];
  // Leave room for the overlap plus its joiner so no chunk ever exceeds maxChars.
  const pieceLimit = Math.max(1, maxChars - (overlapChars > 0 ? overlapChars + 2 : 0));
  const pieces = splitPieces(trimmed, pieceLimit);
  const chunks: string[] = [];
  let current = '';
  for (const piece of pieces) {
    const joined = current === '' ? piece.text : current + piece.joiner + piece.text;
    if (joined.length <= maxChars) {
      current = joined;
      continue;
    }
    chunks.push(current);
    const tail = overlapTail(current, overlapChars);
    current = tail === '' ? piece.text : tail + piece.joiner + piece.text;
  }
  if (current.trim() !== '') chunks.push(current);
  return chunks.map((c) => c.trim()).filter((c) => c !== '');
}

/** Blocks separated by blank lines; a fenced code block stays one block even with blank lines. */
function paragraphs(text: string): string[] {
  const blocks: string[] = [];
  let block: string[] = [];
  let fence: string | null = null;
  for (const line of text.split('\n')) {
    const marker = FENCE.exec(line)?.[1];
    if (marker) {
      if (fence === null) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = null;
    }
    if (fence === null && line.trim() === '') {
      if (block.length > 0) blocks.push(block.join('\n'));
      block = [];
    } else {
      block.push(line);
    }
  }
  if (block.length > 0) blocks.push(block.join('\n'));
  return blocks;
}

// Sentence ends: . ! ? … (and CJK 。！？) followed by whitespace, or CJK marks directly.
const SENTENCE_END = /(?<=[.!?…])\s+|(?<=[。！？])/u;

const SPLITTERS: Array<{ joiner: string; split: (text: string) => string[] }> = [
  { joiner: '\n\n', split: paragraphs },
  { joiner: '\n', split: (text) => text.split('\n') },
  { joiner: ' ', split: (text) => text.split(SENTENCE_END) },
  { joiner: ' ', split: (text) => text.split(/\s+/) },
];

function splitPieces(text: string, limit: number, level = 0, joiner = ''): Piece[] {
  if (text.length <= limit) return [{ text, joiner }];
  const splitter = SPLITTERS[level];
  if (!splitter) return hardSplit(text, limit, joiner);
  const parts = splitter.split(text).filter((part) => part.trim() !== '');
  if (parts.length <= 1) return splitPieces(text, limit, level + 1, joiner);
  return parts.flatMap((part, i) => splitPieces(part, limit, level + 1, i === 0 ? joiner : splitter.joiner));
}

// Last resort for a single over-long token (a hash, base64, CJK without spaces).
function hardSplit(text: string, limit: number, joiner: string): Piece[] {
  const pieces: Piece[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + limit);
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1)) && end - start > 1) end--;
    pieces.push({ text: text.slice(start, end), joiner: start === 0 ? joiner : '' });
    start = end;
  }
  return pieces;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Up to `overlapChars` from the end of a chunk, starting at a word boundary when there is one. */
function overlapTail(chunk: string, overlapChars: number): string {
  if (overlapChars === 0) return '';
  let start = Math.max(0, chunk.length - overlapChars);
  if (start > 0 && isHighSurrogate(chunk.charCodeAt(start - 1))) start++;
  const tail = chunk.slice(start);
  // Prefer to start at a sentence, then at a word.
  const sentence = /[.!?…。！？]\s+(?=\S)/u.exec(tail);
  if (sentence) return tail.slice(sentence.index + sentence[0].length).trim();
  if (start === 0 || /\s/.test(chunk.charAt(start - 1))) return tail.trim();
  const space = tail.search(/\s/);
  return (space >= 0 ? tail.slice(space) : tail).trim();
}
