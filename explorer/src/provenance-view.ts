import {
  ExplorerActorDocument,
  ExplorerProvenanceDocument,
  type ExplorerProvenanceQuery,
} from '../generated/graphql.js';
import { excerpt, formatTime, formatValue, h, mount } from './dom.js';
import type { Navigator } from './navigator.js';
import { type Session, describeError } from './session.js';

type Step = ExplorerProvenanceQuery['provenance']['steps'][number];
type StepNode = NonNullable<Step['node']>;
type ObservationNode = Extract<StepNode, { __typename: 'Observation' }>;

/** How much of an observation's text a step shows before "show all". */
const MESSAGE_CHARS = 280;

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
      actors = await actorNames(provenance.steps);
      mount(
        chain,
        provenance.steps.length === 0 &&
          h('p', { class: 'muted' }, 'Nothing visible to you rests under this item.'),
        h('ol', { class: 'steps' }, provenance.steps.map(stepCard)),
        endNote(provenance.steps),
        provenance.truncated &&
          h('p', { class: 'warning' }, 'Truncated: an item had more evidence than a walk lists.'),
      );
    } catch (error) {
      mount(chain, h('p', { class: 'error' }, describeError(error)));
    }
  }

  /** Display names of the chain's actors by "type:id" (absent when no entity names one). */
  let actors = new Map<string, string>();

  async function actorNames(steps: Step[]): Promise<Map<string, string>> {
    const refs = new Map<string, { type: string; id: string }>();
    for (const s of steps) {
      const actor = s.node?.__typename === 'Observation' ? s.node.actor : null;
      if (actor) refs.set(`${actor.type}:${actor.id}`, actor);
    }
    const names = new Map<string, string>();
    await Promise.all(
      [...refs].map(async ([ref, actor]) => {
        try {
          const found = await session.client.request(ExplorerActorDocument, {
            namespace: session.namespace,
            typed: ref,
            bare: actor.id,
          });
          const title = found.typed?.title ?? found.bare?.title;
          if (title) names.set(ref, title);
        } catch {
          // Unnamed: the step shows the actor as recorded.
        }
      }),
    );
    return names;
  }

  function stepCard(step: Step): HTMLElement {
    const metadata = step.metadata && typeof step.metadata === 'object' ? Object.entries(step.metadata) : [];
    const observation = step.node?.__typename === 'Observation' ? step.node : null;
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
        observation
          ? observationHead(step, observation, actors)
          : [
              step.kind === 'entity' && step.uri
                ? h('button', { class: 'link strong', on: { click: () => openEntityOf(step) } }, step.label)
                : h('strong', {}, step.label),
              step.at && h('span', { class: 'muted small' }, ` ${formatTime(step.at)}`),
            ],
        observation && message(observation),
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

/**
 * An observation's kind, who wrote it (its actor, by name when an entity names it; else the
 * source that reported it) and when.
 */
function observationHead(step: Step, o: ObservationNode, actors: Map<string, string>): HTMLElement {
  const source = step.source ? [step.source.system, step.source.stream].filter(Boolean).join(' / ') : null;
  const ref = o.actor ? `${o.actor.type}:${o.actor.id}` : null;
  const name = ref ? actors.get(ref) : undefined;
  const author = ref
    ? h(
        'span',
        { class: 'author', title: 'The actor recorded with the observation' },
        name ?? ref,
        name && [' (', h('code', {}, ref), ')'],
      )
    : source &&
      h(
        'span',
        { class: 'author', title: 'No actor was recorded: the source that reported it' },
        `${source} (no actor recorded)`,
      );
  return h(
    'div',
    { class: 'step-head' },
    h('strong', {}, o.kind),
    author && [h('span', { class: 'muted' }, ' by '), author],
    step.at && h('span', { class: 'muted small' }, ` · ${formatTime(step.at)}`),
  );
}

/** The observation's text, cut at a word boundary; "show all" gives the rest. */
function message(o: ObservationNode): HTMLElement {
  if (o.observationStatus === 'REDACTED') {
    return h('p', { class: 'message redacted', data: { testid: 'message' } }, 'Redacted: its text is gone.');
  }
  const text = o.content ?? '';
  if (!text.trim())
    return h('p', { class: 'message muted', data: { testid: 'message' } }, 'No text recorded.');
  const short = excerpt(text, MESSAGE_CHARS);
  const quote = h('blockquote', { class: 'message', data: { testid: 'message' } }, short);
  if (short === text.trim()) return quote;
  const more = h(
    'button',
    {
      class: 'link small',
      on: {
        click: () => {
          quote.textContent = text;
          more.remove();
        },
      },
    },
    'show all',
  );
  quote.append(' ', more);
  return quote;
}

/**
 * Why a chain stops at the item itself: a fact with no observation under it was asserted
 * directly, or lost its evidence to a redaction (EVIDENCE_LOST and its reason), or was
 * retracted. Hidden evidence reads exactly like none, so the text says "that you can read".
 */
function endNote(steps: Step[]): HTMLElement | null {
  const top = steps[0];
  if (!top || steps.some((s) => s.depth > 0)) return null;
  const note = (reason: string, title: string, ...detail: (string | null | undefined)[]) =>
    h(
      'div',
      { class: `note note-${reason}`, data: { testid: 'provenance-note', reason } },
      h('strong', {}, title),
      detail.filter(Boolean).map((d) => h('p', {}, d!)),
    );
  if (top.kind === 'fact') {
    const fact = top.node?.__typename === 'Fact' ? top.node : null;
    if (fact?.factStatus === 'EVIDENCE_LOST') {
      return note(
        'redacted',
        'Evidence redacted',
        'The observations this fact rested on were redacted or purged, so nothing is left to show. ' +
          'The fact is kept for the audit trail and is no longer served.',
        fact.statusReason && `Recorded reason: ${fact.statusReason}`,
      );
    }
    if (fact?.factStatus === 'RETRACTED') {
      return note('retracted', 'Retracted', fact.statusReason && `Reason: ${fact.statusReason}`);
    }
    if (!fact || fact.evidence === 'ASSERTED') {
      return note(
        'asserted',
        'Asserted directly, no observation recorded',
        'It was written as a fact (assertFacts) without an observation as its evidence, or with none ' +
          'that you can read, so the chain ends here.',
      );
    }
    return note(
      'no-evidence',
      `${fact.evidence.toLowerCase()}, no observation recorded`,
      'No observation that you can read is recorded as its evidence.',
    );
  }
  if (top.kind === 'entity' || top.kind === 'chunk') {
    return note(
      'asserted',
      'Written directly, no source recorded',
      `No document or observation that you can read rests under this ${top.kind}.`,
    );
  }
  return null;
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
