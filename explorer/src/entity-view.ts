import type { Core } from 'cytoscape';
import {
  ExplorerEntityDocument,
  type ExplorerEntityQuery,
  type ExplorerFactFragment,
  ExplorerTimelineDocument,
  type ExplorerTimelineQuery,
} from '../generated/graphql.js';
import { excerpt, formatTime, formatValue, h, kindBadge, mount } from './dom.js';
import type { Navigator } from './navigator.js';
import { drawNeighbourhood } from './graph.js';
import { createSearchPanel } from './search-panel.js';
import { type Session, describeError } from './session.js';

type Entity = NonNullable<ExplorerEntityQuery['entity']>;
type TimelineEvent = NonNullable<ExplorerTimelineQuery['timeline']>['edges'][number]['node'];

/** The entity view: the search panel, then one entity as of a time slider. */
export function createEntityView(session: Session, nav: Navigator) {
  const panel = h('section', { class: 'entity-panel', data: { testid: 'entity' } }, emptyState());
  const root = h('div', { class: 'entity-view' }, createSearchPanel(session, nav), panel);

  let openKey: string | null = null;
  let moments: string[] = [];
  let position = 0;
  let graph: Core | null = null;
  let requestSeq = 0;

  /** Opens an entity: its timeline gives the slider's stops; the slider starts at now. */
  async function open(key: string): Promise<void> {
    openKey = key;
    const seq = ++requestSeq;
    mount(panel, h('p', { class: 'muted' }, 'Loading…'));
    try {
      const [timeline, entity] = await Promise.all([
        session.client.request(ExplorerTimelineDocument, { namespace: session.namespace, key }),
        session.client.request(ExplorerEntityDocument, { namespace: session.namespace, key, asOf: null }),
      ]);
      if (seq !== requestSeq) return;
      if (!entity.entity || !timeline.timeline) {
        mount(panel, h('p', { class: 'muted', data: { testid: 'not-found' } }, `No entity "${key}" here.`));
        return;
      }
      const events = timeline.timeline.edges.map((e) => e.node);
      moments = [...new Set(events.map((e) => e.at))].sort();
      position = moments.length;
      renderEntity(entity.entity, events);
    } catch (error) {
      if (seq === requestSeq) mount(panel, h('p', { class: 'error' }, describeError(error)));
    }
  }

  /** The slider's time: a timeline moment, or null for now (its last stop). */
  const asOf = () => (position < moments.length ? moments[position]! : null);

  async function moveTo(next: number): Promise<void> {
    position = Math.max(0, Math.min(moments.length, next));
    const seq = ++requestSeq;
    const key = openKey!;
    try {
      const data = await session.client.request(ExplorerEntityDocument, {
        namespace: session.namespace,
        key,
        asOf: asOf(),
      });
      if (seq !== requestSeq || !data.entity) return;
      renderAsOf(data.entity);
    } catch (error) {
      if (seq === requestSeq) panel.querySelector('.as-of-body')?.replaceChildren(describeError(error));
    }
  }

  function renderEntity(entity: Entity, events: TimelineEvent[]): void {
    const slider = h('input', {
      attrs: {
        type: 'range',
        min: '0',
        max: String(moments.length),
        value: String(position),
        step: '1',
        'aria-label': 'As of',
        'data-testid': 'time-slider',
      },
      on: { input: (e) => void moveTo(Number((e.target as HTMLInputElement).value)) },
    });
    mount(
      panel,
      h(
        'header',
        { class: 'entity-head' },
        kindBadge(entity.kind),
        h('h2', {}, entity.title),
        h('code', {}, entity.key),
        entity.scopes.map((s) => h('span', { class: 'scope' }, s)),
        entity.placeholder && h('span', { class: 'flag' }, 'placeholder'),
        entity.stale && h('span', { class: 'flag' }, 'stale'),
        h(
          'button',
          { class: 'link', on: { click: () => nav.openProvenance(entity.id, entity.title) } },
          'provenance →',
        ),
      ),
      h(
        'div',
        { class: 'slider-row' },
        h('label', {}, 'As of'),
        slider,
        h('output', { data: { testid: 'as-of' } }, 'now'),
      ),
      h('div', { class: 'as-of-body' }),
      h('h3', {}, 'Timeline'),
      renderTimeline(events, (i) => {
        slider.value = String(i);
        void moveTo(i);
      }),
    );
    renderAsOf(entity);
  }

  function renderAsOf(entity: Entity): void {
    const when = asOf();
    const output = panel.querySelector('output');
    if (output) output.textContent = when ? formatTime(when) : 'now';
    const body = panel.querySelector('.as-of-body')!;
    graph?.destroy();
    const canvas = h('div', { class: 'graph', data: { testid: 'graph' } });
    const valid = new Set(entity.current.edges.map((e) => e.node.id));
    const closed = entity.history.edges.map((e) => e.node).filter((f) => !valid.has(f.id));
    mount(
      body,
      renderSummary(entity.summary, nav),
      h(
        'div',
        { class: 'columns' },
        h('div', { class: 'card' }, h('h3', {}, 'Attributes'), renderAttributes(entity.attributes)),
        h(
          'div',
          { class: 'card' },
          h('h3', {}, 'Facts'),
          h(
            'ul',
            { class: 'facts', data: { testid: 'facts' } },
            entity.current.edges.map((e) => factRow(e.node, false, nav)),
            closed.map((f) => factRow(f, true, nav)),
          ),
          entity.current.edges.length + closed.length === 0 &&
            h('p', { class: 'muted' }, 'No facts at this time.'),
        ),
      ),
      h(
        'div',
        { class: 'card' },
        h(
          'h3',
          {},
          'Neighbourhood',
          h('span', { class: 'muted small' }, ' 1–2 hops; click a node or an edge'),
        ),
        canvas,
        h(
          'div',
          { class: 'legend' },
          h('span', { class: 'l-valid' }, 'valid'),
          h('span', { class: 'l-conflict' }, 'in conflict'),
          h('span', { class: 'l-closed' }, 'closed'),
        ),
      ),
    );
    graph = drawNeighbourhood(canvas, entity, nav);
  }

  root.addEventListener('explorer:reload', () => {
    if (openKey) void (position === moments.length ? open(openKey) : moveTo(position));
  });
  return {
    element: root,
    open,
    get openKey() {
      return openKey;
    },
  };
}

function factRow(fact: ExplorerFactFragment, closed: boolean, nav: Navigator): HTMLElement {
  const cls = ['fact', closed ? 'closed' : '', fact.conflict ? 'conflict' : ''].join(' ');
  return h(
    'li',
    { class: cls, data: { factId: fact.factId } },
    h(
      'button',
      { class: 'fact-open', on: { click: () => nav.openProvenance(fact.id, describeFact(fact)) } },
      h('span', { class: 'subject' }, fact.subject.title),
      h('span', { class: 'predicate' }, fact.predicate),
      h('span', { class: 'object' }, fact.object.title),
    ),
    h(
      'span',
      { class: 'when' },
      `${formatTime(fact.validFrom)} → ${fact.validTo ? formatTime(fact.validTo) : 'open'}`,
    ),
    fact.conflict && h('span', { class: 'flag conflict' }, 'conflict'),
    (closed || fact.status !== 'ACTIVE') && h('span', { class: 'flag' }, fact.status.toLowerCase()),
  );
}

/** The entity's summary (DERIVED), with a link to each source it rests on. */
function renderSummary(summary: Entity['summary'], nav: Navigator): HTMLElement {
  if (!summary)
    return h('div', { class: 'card summary muted', data: { testid: 'summary' } }, 'Nothing known yet.');
  const origin = summary.stored
    ? `${summary.by}, built ${formatTime(summary.builtAt)}${summary.stale ? ' (a change is waiting)' : ''}`
    : `${summary.by}, built for this view`;
  return h(
    'div',
    { class: 'card summary', data: { testid: 'summary' } },
    h(
      'h3',
      {},
      'Summary',
      h('span', { class: 'flag' }, 'DERIVED'),
      h('span', { class: 'muted small' }, ` ${origin}`),
      summary.chunk &&
        h(
          'button',
          { class: 'link', on: { click: () => nav.openProvenance(summary.chunk!.id, 'Summary') } },
          'provenance →',
        ),
    ),
    h('pre', { class: 'summary-text' }, summary.text),
    h(
      'div',
      { class: 'summary-sources', data: { testid: 'summary-sources' } },
      h('span', { class: 'muted small' }, 'Rests on: '),
      summary.facts.map((f) =>
        h(
          'button',
          { class: 'source-link', on: { click: () => nav.openProvenance(f.id, f.predicate) } },
          `${f.subject.title} ${f.predicate} ${f.object.title}`,
        ),
      ),
      summary.observations.map((o) =>
        h(
          'button',
          { class: 'source-link', on: { click: () => nav.openProvenance(o.id, o.kind) } },
          `${o.kind} ${formatTime(o.occurredAt)}`,
        ),
      ),
    ),
  );
}

function renderAttributes(attributes: unknown): HTMLElement {
  if (!attributes || typeof attributes !== 'object' || Object.keys(attributes).length === 0) {
    return h('p', { class: 'muted' }, 'No attributes at this time.');
  }
  return h(
    'table',
    { class: 'attributes', data: { testid: 'attributes' } },
    Object.entries(attributes as Record<string, unknown>).map(([k, v]) =>
      h('tr', {}, h('th', {}, k), h('td', {}, formatValue(v))),
    ),
  );
}

function renderTimeline(events: TimelineEvent[], jump: (position: number) => void): HTMLElement {
  const moments = [...new Set(events.map((e) => e.at))].sort();
  if (events.length === 0) return h('p', { class: 'muted' }, 'Nothing happened yet.');
  return h(
    'ol',
    { class: 'timeline', data: { testid: 'timeline' } },
    events.map((e) =>
      h(
        'li',
        { class: `event ${e.kind.toLowerCase()}` },
        h(
          'button',
          { class: 'link when', on: { click: () => jump(moments.indexOf(e.at)) } },
          formatTime(e.at),
        ),
        h('span', { class: 'event-kind' }, e.kind.replace('_', ' ').toLowerCase()),
        e.fact && h('span', {}, describeFact(e.fact)),
        e.observation && h('span', {}, `${e.observation.kind}: ${excerpt(e.observation.content ?? '', 140)}`),
      ),
    ),
  );
}

export function describeFact(fact: ExplorerFactFragment): string {
  return `${fact.subject.title} ${fact.predicate} ${fact.object.title}`;
}

function emptyState(): HTMLElement {
  return h(
    'div',
    { class: 'empty' },
    h('h2', {}, 'Look at the memory'),
    h('p', {}, 'Search on the left, then open an entity: its attributes and facts as of any time, its'),
    h('p', {}, 'neighbourhood as a graph, its timeline, and the provenance of every fact.'),
  );
}
