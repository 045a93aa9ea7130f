import {
  ExplorerContextDocument,
  type ExplorerContextQuery,
  ExplorerNodesDocument,
  type ExplorerNodesQuery,
  ExplorerTraceDocument,
  type ContextStrategy,
} from '../generated/graphql.js';
import { type Child, excerpt, h, mount, onSubmit } from './dom.js';
import type { Navigator } from './navigator.js';
import { type Session, describeError } from './session.js';

type Pack = ExplorerContextQuery['context'];
type Item = Pack['sections'][number]['items'][number];
type NodeOf = NonNullable<ExplorerNodesQuery['nodes'][number]>;

/** One traced candidate (ContextTrace.decisions): what happened to it and why. */
interface TracedDecision {
  id: string;
  kind: string;
  localId: string | null;
  decision: 'INCLUDED' | 'EXCLUDED' | 'BLOCKED';
  reason: string | null;
  score: number | null;
  tokenEstimate: number | null;
}

const STRATEGIES: ContextStrategy[] = ['HYBRID', 'AUTO', 'SEMANTIC', 'EXACT', 'GRAPH', 'BRIEFING'];
// state: how well a current-state item matches the question (it leads the pack, not fused by rank).
const SIGNALS = ['rrf', 'state', 'exactId', 'freshness', 'current', 'evidence', 'scope'] as const;

/** The context view: a query, a strategy and a budget, then the pack by section and what was left out. */
export function createContextView(session: Session, nav: Navigator) {
  const query = h('input', {
    attrs: { type: 'text', placeholder: 'What should the agent know?', 'aria-label': 'Query' },
  });
  const strategy = h(
    'select',
    { attrs: { 'aria-label': 'Strategy' } },
    STRATEGIES.map((s) => h('option', { attrs: { value: s } }, s)),
  );
  const budget = h('input', {
    attrs: {
      type: 'number',
      min: '20',
      max: '32000',
      step: '10',
      value: '600',
      'aria-label': 'Budget (tokens)',
    },
  });
  const anchors = h('input', {
    attrs: { type: 'text', placeholder: 'anchor keys (optional)', 'aria-label': 'Anchors' },
  });
  const out = h('div', { class: 'pack', data: { testid: 'pack' } });
  const form = h(
    'form',
    { class: 'context-form card', on: { submit: onSubmit(() => void compile()) } },
    h('label', { class: 'grow' }, 'Query', query),
    h('label', {}, 'Strategy', strategy),
    h('label', {}, 'Budget', budget),
    h('label', {}, 'Anchors', anchors),
    h('button', { attrs: { type: 'submit' } }, 'Compile'),
  );
  const root = h('div', { class: 'context-view' }, form, out);

  async function compile(): Promise<void> {
    mount(out, h('p', { class: 'muted' }, 'Compiling…'));
    const anchorKeys = anchors.value
      .split(/[\s,]+/)
      .map((s) => s.trim())
      .filter(Boolean);
    try {
      const { context } = await session.client.request(ExplorerContextDocument, {
        input: {
          namespaces: [session.namespace],
          query: query.value,
          strategy: strategy.value as ContextStrategy,
          budgetTokens: Number(budget.value) || 600,
          ...(anchorKeys.length ? { anchors: anchorKeys } : {}),
        },
      });
      const trace = await session.client.request(ExplorerTraceDocument, {
        namespace: session.namespace,
        traceId: context.traceId,
      });
      const decisions = (trace.contextTrace?.decisions ?? []) as TracedDecision[];
      const labels = await labelsOf(session, context, decisions);
      mount(out, renderPack(context, decisions, labels, nav));
    } catch (error) {
      mount(out, h('p', { class: 'error' }, describeError(error)));
    }
  }

  return { element: root, setQuery: (q: string) => (query.value = q) };
}

/**
 * A readable name for every candidate the trace names: the pack's own titles for what it
 * served, and for what it left out the stored items behind the trace's Relay ids, read in one
 * `nodes` request (null where one is gone or not readable: the row then says what it was).
 */
async function labelsOf(
  session: Session,
  pack: Pack,
  decisions: TracedDecision[],
): Promise<Map<string, string>> {
  const labels = new Map<string, string>();
  for (const item of pack.sections.flatMap((s) => s.items)) if (item.title) labels.set(item.id, item.title);
  const ids = [
    ...new Set(
      decisions
        .filter((d) => d.decision !== 'INCLUDED' && d.kind !== 'current' && d.kind !== 'session')
        .map((d) => d.id)
        .filter((id) => !labels.has(id)),
    ),
  ];
  if (ids.length === 0) return labels;
  const { nodes } = await session.client.request(ExplorerNodesDocument, { ids });
  nodes.forEach((node, i) => {
    const label = node && nodeLabel(node);
    if (label) labels.set(ids[i]!, label);
  });
  return labels;
}

function nodeLabel(node: NodeOf): string | null {
  switch (node.__typename) {
    case 'Chunk': {
      // A document's fragment by its heading; a message's by its first words.
      const name = node.chunkTitle ?? node.node.title;
      return node.heading ? `${name} › ${node.heading}` : `${name} — ${excerpt(node.text, 60)}`;
    }
    case 'Fact':
      return `${node.subject.title} ${node.predicate} ${node.object.title}`;
    case 'Entity':
      return node.title;
    case 'Observation':
      return `${node.kind}: ${excerpt(node.content ?? '', 80)}`;
    default:
      return null;
  }
}

/** What a left-out row is called when its item is gone or not readable: its kind and local id. */
function fallbackLabel(d: TracedDecision): string {
  if (d.kind === 'current') return 'the current state (ephemeral context)';
  if (d.kind === 'chunk' && d.localId) return `chunk #${d.localId} (no longer readable)`;
  return d.localId ? `${d.kind} ${d.localId}` : d.id;
}

/** The pack by section, then every candidate the trace says was left out. */
function renderPack(
  pack: Pack,
  decisions: TracedDecision[],
  labels: Map<string, string>,
  nav: Navigator,
): Child[] {
  const top = Math.max(1e-9, ...pack.sections.flatMap((s) => s.items.map((i) => i.score)));
  const left = decisions.filter((d) => d.decision !== 'INCLUDED');
  const usedPct = Math.min(100, (100 * pack.budget.used) / Math.max(1, pack.budget.maxTokens));
  return [
    h(
      'div',
      { class: 'card pack-summary' },
      h('strong', {}, `${pack.budget.used} / ${pack.budget.maxTokens} tokens`),
      h('div', { class: 'budget-bar' }, h('div', { style: { width: `${usedPct}%` } })),
      h('code', { title: 'contextTrace(traceId)' }, pack.traceId),
      pack.budget.truncated && h('span', { class: 'flag' }, 'current truncated'),
      pack.warnings.map((w) => h('span', { class: 'flag warning' }, w)),
      pack.emptyReason && h('span', { class: 'flag' }, pack.emptyReason),
    ),
    pack.sections.map((section) =>
      h(
        'section',
        { class: 'card pack-section', data: { section: section.kind } },
        h(
          'h3',
          {},
          section.kind.replace(/_/g, ' ').toLowerCase(),
          h('span', { class: 'count' }, section.items.length),
        ),
        section.items.map((item) => itemCard(item, top, nav)),
      ),
    ),
    pack.sections.length === 0 && h('p', { class: 'muted' }, 'The pack is empty.'),
    h(
      'section',
      { class: 'card dropped', data: { testid: 'dropped' } },
      h('h3', {}, 'Left out', h('span', { class: 'count' }, left.length)),
      left.length === 0
        ? h('p', { class: 'muted' }, 'Every candidate made it into the pack.')
        : h(
            'table',
            {},
            h(
              'tr',
              {},
              h('th', {}, 'kind'),
              h('th', {}, 'item'),
              h('th', {}, 'reason'),
              h('th', {}, 'score'),
              h('th', {}, 'tokens'),
            ),
            left.map((d) =>
              h(
                'tr',
                {},
                h('td', {}, d.kind),
                h('td', {}, leftOutItem(d, labels.get(d.id) ?? null, nav)),
                h(
                  'td',
                  {},
                  h('span', { class: `reason ${d.decision.toLowerCase()}` }, d.reason ?? d.decision),
                ),
                h('td', {}, d.score === null ? '—' : d.score.toFixed(4)),
                h('td', {}, d.tokenEstimate ?? '—'),
              ),
            ),
          ),
    ),
  ];
}

/** A left-out row's item: its name, opening its provenance when it has any to walk. */
function leftOutItem(d: TracedDecision, label: string | null, nav: Navigator): HTMLElement {
  const text = label ?? fallbackLabel(d);
  if (d.kind === 'current' || d.kind === 'session') return h('span', { class: 'muted' }, text);
  return h(
    'button',
    {
      class: `link left-out${label ? '' : ' unnamed'}`,
      title: d.localId ? `${d.kind} ${d.localId}` : d.id,
      on: { click: () => nav.openProvenance(d.id, text) },
    },
    text,
  );
}

function itemCard(item: Item, top: number, nav: Navigator): HTMLElement {
  const openable = item.kind !== 'current';
  return h(
    'article',
    { class: `item${item.conflict ? ' conflict' : ''}`, data: { kind: item.kind } },
    h(
      'header',
      {},
      h('span', { class: 'kind' }, item.kind),
      h('strong', {}, item.title ?? ''),
      item.conflict && h('span', { class: 'flag conflict' }, 'conflict'),
      h('span', { class: 'score', title: 'score = rrf + bonuses (ordering only)' }, item.score.toFixed(4)),
      h('span', { class: 'muted small' }, `${item.tokenEstimate} tok`),
    ),
    h('p', { class: 'snippet' }, item.text.slice(0, 240)),
    h(
      'div',
      { class: 'signals' },
      SIGNALS.map((name) => {
        const value = item.signals[name];
        return h(
          'div',
          { class: 'signal', title: `${name} ${value.toFixed(4)}` },
          h('span', { class: 'name' }, name),
          h(
            'span',
            { class: 'bar' },
            h('span', { class: `fill s-${name}`, style: { width: `${(100 * value) / top}%` } }),
          ),
          h('span', { class: 'value' }, value === 0 ? '0' : value.toFixed(4)),
        );
      }),
    ),
    h(
      'footer',
      {},
      item.signals.channels.map((c) => h('span', { class: 'channel' }, `${c.channel} #${c.rank + 1}`)),
      openable &&
        h(
          'button',
          { class: 'link', on: { click: () => nav.openProvenance(item.id, item.title ?? item.kind) } },
          'provenance →',
        ),
    ),
  );
}
