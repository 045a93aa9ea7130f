import { ExplorerProvenanceDocument, type ExplorerProvenanceQuery } from '../generated/graphql.js';
import { formatTime, formatValue, h, mount } from './dom.js';
import type { Navigator } from './navigator.js';
import { type Session, describeError } from './session.js';

type Step = ExplorerProvenanceQuery['provenance']['steps'][number];

/** The provenance view: from the item asked about down to its observations, sources and URIs. */
export function createProvenanceView(session: Session, nav: Navigator) {
  const heading = h('h2', {}, 'Provenance');
  const chain = h('div', { class: 'chain', data: { testid: 'provenance' } }, hint());
  const root = h('div', { class: 'provenance-view' }, heading, chain);

  async function show(id: string, label: string): Promise<void> {
    heading.textContent = `Provenance of ${label}`;
    mount(chain, h('p', { class: 'muted' }, 'Walking the chain…'));
    try {
      const { provenance } = await session.client.request(ExplorerProvenanceDocument, { id });
      mount(
        chain,
        provenance.steps.length === 0 &&
          h('p', { class: 'muted' }, 'Nothing visible to you rests under this item.'),
        h('ol', { class: 'steps' }, provenance.steps.map(stepCard)),
        provenance.truncated &&
          h('p', { class: 'warning' }, 'Truncated: an item had more evidence than a walk lists.'),
      );
    } catch (error) {
      mount(chain, h('p', { class: 'error' }, describeError(error)));
    }
  }

  function stepCard(step: Step): HTMLElement {
    const metadata = step.metadata && typeof step.metadata === 'object' ? Object.entries(step.metadata) : [];
    return h(
      'li',
      {
        class: `step step-${step.kind}`,
        style: { marginLeft: `${step.depth * 28}px` },
        data: { kind: step.kind },
      },
      h('span', { class: 'kind' }, step.kind),
      h(
        'div',
        { class: 'step-body' },
        step.kind === 'entity' && step.uri
          ? h('button', { class: 'link strong', on: { click: () => openEntityOf(step) } }, step.label)
          : h('strong', {}, step.label),
        step.at && h('span', { class: 'muted small' }, ` ${formatTime(step.at)}`),
        step.source &&
          h(
            'div',
            { class: 'source' },
            [step.source.system, step.source.stream, step.source.externalId].filter(Boolean).join(' / '),
          ),
        step.uri && h('div', { class: 'uri' }, uriLink(step.uri)),
        metadata.length > 0 &&
          h(
            'dl',
            { class: 'metadata' },
            metadata.map(([k, v]) => [h('dt', {}, k), h('dd', {}, formatValue(v))]),
          ),
      ),
    );
  }

  /** memgate://<namespace>/entity/<key> names an entity of this namespace. */
  function openEntityOf(step: Step): void {
    const match = /^memgate:\/\/[^/]+\/entity\/(.+)$/.exec(step.uri ?? '');
    if (match) nav.openEntity(decodeURIComponent(match[1]!));
  }

  return { element: root, show };
}

/** Outside URIs open in a new tab without a referrer; memgate:// ones are addresses, shown as text. */
function uriLink(uri: string): HTMLElement {
  if (/^https?:\/\//i.test(uri)) {
    return h('a', { attrs: { href: uri, target: '_blank', rel: 'noopener noreferrer' } }, uri);
  }
  return h('code', {}, uri);
}

function hint(): HTMLElement {
  return h(
    'p',
    { class: 'muted' },
    'Click a fact, a search fragment or a pack item to walk down to its source.',
  );
}
