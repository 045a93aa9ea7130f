import { ExplorerSearchDocument, type ExplorerSearchQuery } from '../generated/graphql.js';
import { type Child, excerpt, h, kindBadge, mount, onSubmit } from './dom.js';
import type { Navigator } from './navigator.js';
import { type Session, describeError } from './session.js';

/** The search box: hybrid search over fragments, plus the entities whose key starts with the text. */
export function createSearchPanel(session: Session, nav: Navigator): HTMLElement {
  const results = h('div', { class: 'results', data: { testid: 'search-results' } });
  const input = h('input', {
    attrs: {
      type: 'search',
      placeholder: 'Search memory (hybrid: vector, text, identifiers)',
      'aria-label': 'Search',
    },
  });
  async function search(query: string): Promise<void> {
    if (!query.trim()) return;
    mount(results, h('p', { class: 'muted' }, 'Searching…'));
    try {
      const data = await session.client.request(ExplorerSearchDocument, {
        namespace: session.namespace,
        query,
      });
      mount(results, renderResults(data, nav));
    } catch (error) {
      mount(results, h('p', { class: 'error' }, describeError(error)));
    }
  }
  const form = h(
    'form',
    { class: 'search', on: { submit: onSubmit(() => void search(input.value)) } },
    input,
    h('button', { attrs: { type: 'submit' } }, 'Search'),
  );
  return h('aside', { class: 'sidebar' }, form, results);
}

function renderResults(data: ExplorerSearchQuery, nav: Navigator): Child[] {
  const byKey = data.entities.edges.map((e) => e.node);
  const hits = data.search.hits;
  return [
    byKey.length > 0 && h('h3', {}, 'Entities'),
    byKey.map((n) =>
      h(
        'button',
        { class: 'hit entity-hit', on: { click: () => nav.openEntity(n.key) } },
        kindBadge(n.kind),
        h('strong', {}, n.title),
        h('code', {}, n.key),
      ),
    ),
    hits.length > 0 && h('h3', {}, 'Fragments'),
    hits.map((hit) =>
      h(
        'div',
        { class: 'hit chunk-hit' },
        h(
          'button',
          { class: 'hit-open', on: { click: () => nav.openEntity(hit.chunk.node.key) } },
          kindBadge(hit.chunk.node.kind),
          h('strong', {}, hit.chunk.node.title),
          h('span', { class: 'score' }, hit.score.toFixed(4)),
        ),
        h(
          'p',
          { class: 'snippet' },
          hit.chunk.heading ? `${hit.chunk.heading} — ` : '',
          excerpt(hit.chunk.text, 180),
        ),
        h(
          'button',
          {
            class: 'link',
            on: { click: () => nav.openProvenance(hit.chunk.id, hit.chunk.title ?? 'chunk') },
          },
          'provenance →',
        ),
      ),
    ),
    byKey.length === 0 && hits.length === 0 && h('p', { class: 'muted' }, 'Nothing found.'),
    data.search.warnings.map((w) => h('p', { class: 'warning' }, w)),
  ];
}
