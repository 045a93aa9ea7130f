import { describe, expect, it } from 'vitest';
import type { ChatMessage, ChatOptions, Llm } from '../../src/providers/llm.js';
import { ECHO_LLM, LlmError } from '../../src/providers/llm.js';
import {
  ECHO_MARKER,
  NO_DATA_ANSWER,
  parseCitations,
  synthesize,
} from '../../src/modules/retrieval/pipeline/synthesis.js';

const OPTIONS = { temperature: 0.1, timeoutMs: 1000, maxTokens: 100 };

function scripted(
  reply: (messages: ChatMessage[], options: ChatOptions) => Promise<string>,
): Llm & { calls: number } {
  const llm = {
    name: 'openai:scripted',
    available: true,
    calls: 0,
    async chat(messages: ChatMessage[], options: ChatOptions) {
      llm.calls++;
      return reply(messages, options);
    },
  };
  return llm;
}

describe('answer synthesis', () => {
  it('answers the fixed no-data text without calling a model when nothing was found', async () => {
    const llm = scripted(async () => 'should not be called');
    expect(await synthesize(llm, 'q?', '', 0, OPTIONS)).toEqual({ kind: 'no-data', answer: NO_DATA_ANSWER });
    expect(llm.calls).toBe(0);
  });

  it('echo returns the context itself, marked', async () => {
    const out = await synthesize(ECHO_LLM, 'q?', 'CONTEXT', 2, OPTIONS);
    expect(out).toEqual({ kind: 'echo', answer: `${ECHO_MARKER}\n\nCONTEXT` });
  });

  it('asks at temperature 0.1 and maps [n] citations', async () => {
    let seen: ChatOptions | undefined;
    const llm = scripted(async (_m, o) => {
      seen = o;
      return 'She moved in May [2], and again later [1][2]. Also [9].';
    });
    const out = await synthesize(llm, 'When?', 'CONTEXT', 3, OPTIONS);
    expect(seen?.temperature).toBe(0.1);
    expect(out).toMatchObject({ kind: 'answer', cited: [2, 1] });
  });

  it('falls back to the marked context when the model fails or hangs', async () => {
    const failing = scripted(async () => {
      throw new LlmError('http', 'HTTP 500');
    });
    expect(await synthesize(failing, 'q', 'CTX', 1, OPTIONS)).toMatchObject({
      kind: 'fallback',
      reason: 'http',
    });
    const hanging = scripted(() => new Promise<string>(() => {}));
    const out = await synthesize(hanging, 'q', 'CTX', 1, { ...OPTIONS, timeoutMs: 50 });
    expect(out).toMatchObject({ kind: 'fallback', reason: 'timeout' });
    expect(out.answer.endsWith('CTX')).toBe(true);
  });

  it('parses [n], [n, m] and [n; m], ignoring out-of-range numbers', () => {
    expect(parseCitations('a [3] b [1, 2] c [2; 4] d [0] [77]', 4)).toEqual([3, 1, 2, 4]);
    expect(parseCitations('no citations', 3)).toEqual([]);
  });
});
