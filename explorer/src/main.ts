import './style.css';
import { ExplorerHelloDocument } from '../generated/graphql.js';
import { createContextView } from './context-view.js';
import { excerpt, h, mount, onSubmit } from './dom.js';
import { createEntityView } from './entity-view.js';
import { type Change, subscribeLive } from './live.js';
import { createProvenanceView } from './provenance-view.js';
import { type Session, describeError, openSession } from './session.js';

/**
 * The memgate explorer: connect with a namespace and a bearer token (kept in memory only),
 * then look at entities, packs and provenance chains; live changes arrive over SSE.
 */
const app = document.getElementById('app')!;
const params = new URLSearchParams(window.location.search);

const namespaceInput = h('input', {
  attrs: {
    type: 'text',
    value: params.get('namespace') ?? 'default',
    'aria-label': 'Namespace',
    required: '',
  },
});
const tokenInput = h('input', {
  attrs: {
    type: 'password',
    placeholder: 'bearer token (none in local mode)',
    'aria-label': 'Token',
    autocomplete: 'off',
  },
});
const status = h('span', { class: 'status', data: { testid: 'status' } }, 'not connected');
const connectForm = h(
  'form',
  { class: 'connect', on: { submit: onSubmit(() => void connect()) } },
  h('label', {}, 'Namespace', namespaceInput),
  h('label', {}, 'Token', tokenInput),
  h('button', { attrs: { type: 'submit' } }, 'Connect'),
);
const main = h('main', {}, welcome());
mount(
  app,
  h('header', { class: 'top' }, h('h1', {}, 'memgate ', h('span', {}, 'explorer')), connectForm, status),
  main,
);

let stopLive: (() => void) | null = null;

async function connect(): Promise<void> {
  stopLive?.();
  const session = openSession(namespaceInput.value.trim(), tokenInput.value.trim());
  // The token now lives in the session only; the field forgets it.
  tokenInput.value = '';
  status.textContent = 'connecting…';
  status.className = 'status';
  try {
    await session.client.request(ExplorerHelloDocument, { namespace: session.namespace });
  } catch (error) {
    status.textContent = 'not connected';
    mount(main, h('p', { class: 'error banner', data: { testid: 'connect-error' } }, describeError(error)));
    return;
  }
  showViews(session);
}

function showViews(session: Session): void {
  const tabs = h('nav', { class: 'tabs' });
  const panes = h('div', { class: 'panes' });
  const feed = h('ul', { class: 'feed', data: { testid: 'live-feed' } });
  const nav = {
    openEntity: (key: string) => {
      select('entity');
      void entity.open(key);
    },
    openProvenance: (id: string, label: string) => {
      select('provenance');
      void provenance.show(id, label);
    },
  };
  const entity = createEntityView(session, nav);
  const context = createContextView(session, nav);
  const provenance = createProvenanceView(session, nav);
  const views = { entity: entity.element, context: context.element, provenance: provenance.element };

  function select(name: keyof typeof views): void {
    for (const [k, el] of Object.entries(views)) el.hidden = k !== name;
    for (const button of tabs.querySelectorAll('button'))
      button.classList.toggle('active', button.dataset.view === name);
  }
  mount(
    tabs,
    (Object.keys(views) as (keyof typeof views)[]).map((name) =>
      h('button', { data: { view: name }, on: { click: () => select(name) } }, name),
    ),
    h(
      'button',
      {
        class: 'refresh',
        title: 'Read the open entity again',
        on: { click: () => entity.element.dispatchEvent(new Event('explorer:reload')) },
      },
      '↻ refresh',
    ),
  );
  mount(panes, views.entity, views.context, views.provenance);
  mount(
    main,
    tabs,
    h('div', { class: 'layout' }, panes, h('aside', { class: 'live card' }, h('h3', {}, 'Live'), feed)),
  );
  select('entity');

  stopLive = subscribeLive(session, {
    onStatus: (state, detail) => {
      status.textContent =
        state === 'live' ? `● live · ${session.namespace}` : `${state}${detail ? `: ${detail}` : ''}`;
      status.className = `status ${state}`;
    },
    onChange: (change) => {
      feed.prepend(
        h(
          'li',
          { class: `change ${change.kind.toLowerCase()}` },
          h('span', { class: 'kind' }, change.kind.toLowerCase()),
          describeChange(change),
        ),
      );
      while (feed.children.length > 30) feed.lastElementChild?.remove();
      if (touches(change, entity.openKey)) entity.element.dispatchEvent(new Event('explorer:reload'));
    },
  });
}

function describeChange(change: Change): string {
  if (change.fact) return `${change.fact.subject.key} ${change.fact.predicate} ${change.fact.object.key}`;
  if (change.observation)
    return `${change.observation.kind}: ${excerpt(change.observation.content ?? '', 100)}`;
  if (change.entity) return `${change.entity.title} (${change.entity.key})`;
  if (change.document) return `${change.document.title} (${change.document.key})`;
  return change.key;
}

/** Whether a change concerns the open entity (itself, or a fact it is an endpoint of). */
function touches(change: Change, key: string | null): boolean {
  if (!key) return false;
  if (change.key === key) return true;
  if (change.fact) return change.fact.subject.key === key || change.fact.object.key === key;
  return change.kind === 'OBSERVATION';
}

function welcome(): HTMLElement {
  return h(
    'div',
    { class: 'empty' },
    h('h2', {}, 'Connect to look at a namespace'),
    h('p', {}, 'Give the namespace and your bearer token. The token stays in this tab’s memory only.'),
    h('p', {}, 'What the token cannot read is never shown; personal data is masked as in GraphQL.'),
  );
}
