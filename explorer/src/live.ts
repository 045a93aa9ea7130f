import { print } from 'graphql';
import { ExplorerLiveDocument, type ExplorerLiveSubscription } from '../generated/graphql.js';
import type { Session } from './session.js';

export type Change = ExplorerLiveSubscription['memoryChanged'];

export interface LiveHandlers {
  onChange(change: Change): void;
  onStatus(status: 'live' | 'connecting' | 'stopped', detail?: string): void;
}

/**
 * Subscription.memoryChanged over Server-Sent Events: a POST to /graphql that accepts
 * text/event-stream (fetch, not EventSource, so the bearer token travels in a header). The
 * gateway sends only rows this token can read. A dropped stream reconnects with a back-off.
 */
export function subscribeLive(session: Session, handlers: LiveHandlers): () => void {
  let stopped = false;
  let controller = new AbortController();
  let delay = 500;

  async function run(): Promise<void> {
    while (!stopped) {
      handlers.onStatus('connecting');
      try {
        await stream(controller.signal);
        delay = 500;
      } catch (error) {
        if (stopped) return;
        handlers.onStatus('connecting', error instanceof Error ? error.message : String(error));
      }
      if (stopped) return;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 10_000);
      controller = new AbortController();
    }
  }

  async function stream(signal: AbortSignal): Promise<void> {
    const response = await fetch(session.endpoint, {
      method: 'POST',
      signal,
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        ...(session.token ? { authorization: `Bearer ${session.token}` } : {}),
      },
      body: JSON.stringify({
        query: print(ExplorerLiveDocument),
        variables: { namespace: session.namespace },
      }),
    });
    if (!response.ok || !response.body) throw new Error(`live updates: HTTP ${response.status}`);
    handlers.onStatus('live');
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        handleEvent(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf('\n\n');
      }
    }
  }

  function handleEvent(block: string): void {
    const data = block
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trimStart())
      .join('\n');
    if (!data) return;
    const message = JSON.parse(data) as { data?: ExplorerLiveSubscription; errors?: { message: string }[] };
    if (message.errors?.length) handlers.onStatus('connecting', message.errors[0]!.message);
    if (message.data?.memoryChanged) handlers.onChange(message.data.memoryChanged);
  }

  void run();
  return () => {
    stopped = true;
    controller.abort();
    handlers.onStatus('stopped');
  };
}
