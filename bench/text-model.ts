/**
 * Synthetic English-like text for the generator. Words are real English words taken from the
 * offline embedder's vocabulary (so vectors and BM25 both see meaningful tokens), grouped into
 * topics: a chunk draws most of its words from one topic, so a query made of a chunk's topic
 * words has a few truly relevant chunks among many partial matches, as in real corpora.
 */
import { Rng, Zipf } from './rng.js';

const TOPIC_COUNT = 400;
const WORDS_PER_TOPIC = 40;
/** The most frequent words are the function words; they fill sentences but are never topics. */
const COMMON_HEAD = 150;

export class TextModel {
  readonly words: readonly string[];
  private readonly topics: string[][];
  private readonly general: Zipf;

  constructor(vocabulary: readonly string[], seed: number) {
    const words = vocabulary.filter((w) => /^[a-z]{3,14}$/.test(w));
    if (words.length < COMMON_HEAD + TOPIC_COUNT) {
      throw new Error(`bench: the embedder vocabulary has only ${words.length} plain words`);
    }
    this.words = words.slice(0, 20_000);
    const rng = new Rng(seed ^ 0x70_71c5);
    const content = this.words.slice(COMMON_HEAD);
    this.topics = Array.from({ length: TOPIC_COUNT }, () =>
      Array.from({ length: WORDS_PER_TOPIC }, () => content[rng.int(content.length)]!),
    );
    this.general = new Zipf(this.words.length, 1.0);
  }

  topicCount(): number {
    return this.topics.length;
  }

  /** Distinct topic words of a topic, the vocabulary a focused query uses. */
  topicWords(topic: number): readonly string[] {
    return this.topics[topic % this.topics.length]!;
  }

  word(rng: Rng, topic: number): string {
    if (rng.chance(0.55)) return rng.pick(this.topics[topic % this.topics.length]!);
    return this.words[this.general.sample(rng)]!;
  }

  /** Sentences of 8–16 words until `chars` characters are reached. */
  paragraph(rng: Rng, topic: number, chars: number): string {
    const sentences: string[] = [];
    let length = 0;
    while (length < chars) {
      const n = rng.between(8, 16);
      const ws: string[] = [];
      for (let i = 0; i < n; i++) ws.push(this.word(rng, topic));
      const sentence = `${ws[0]!.charAt(0).toUpperCase()}${ws.join(' ').slice(1)}.`;
      sentences.push(sentence);
      length += sentence.length + 1;
    }
    return sentences.join(' ');
  }

  /** A capitalised two-word name from the content words. */
  name(rng: Rng): string {
    const a = this.words[COMMON_HEAD + rng.int(this.words.length - COMMON_HEAD)]!;
    const b = this.words[COMMON_HEAD + rng.int(this.words.length - COMMON_HEAD)]!;
    return `${cap(a)} ${cap(b)}`;
  }
}

function cap(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
