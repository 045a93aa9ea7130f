/**
 * A tiny element builder. Text always goes in as text nodes (never innerHTML): everything the
 * page shows comes from memory that agents and outside sources wrote.
 */
export type Child = Node | string | number | null | undefined | false | Child[];

export interface Props {
  class?: string;
  title?: string;
  data?: Record<string, string>;
  attrs?: Record<string, string>;
  style?: Partial<Record<'width' | 'background' | 'marginLeft' | 'borderColor', string>>;
  on?: Partial<Record<'click' | 'input' | 'change' | 'submit' | 'keydown', (event: Event) => void>>;
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props.class) el.className = props.class;
  if (props.title) el.title = props.title;
  for (const [k, v] of Object.entries(props.data ?? {})) el.dataset[k] = v;
  for (const [k, v] of Object.entries(props.attrs ?? {})) el.setAttribute(k, v);
  for (const [k, v] of Object.entries(props.style ?? {})) if (v !== undefined) el.style[k as 'width'] = v;
  for (const [k, fn] of Object.entries(props.on ?? {})) if (fn) el.addEventListener(k, fn);
  append(el, children);
  return el;
}

function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else
      el.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

/** Replaces an element's children. */
export function mount(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** "2025-03-01 09:30" in UTC, the gateway's own time zone. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  return iso.replace('T', ' ').slice(0, 16);
}

export function formatValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A stable colour per entity kind. */
export function kindColour(kind: string): string {
  const palette = ['#4f46e5', '#0891b2', '#059669', '#d97706', '#db2777', '#7c3aed', '#2563eb', '#65a30d'];
  let hash = 0;
  for (const ch of kind) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return palette[hash % palette.length]!;
}

/** A form's submit handler that keeps the page where it is. */
export function onSubmit(run: () => void): (event: Event) => void {
  return (event) => {
    event.preventDefault();
    run();
  };
}

export function kindBadge(kind: string): HTMLElement {
  return h('span', { class: 'kind', style: { background: kindColour(kind) } }, kind);
}

/**
 * At most `max` characters of a text on one line: whitespace runs become one space, and a longer
 * text is cut at the last word boundary that fits (mid-word only when a single word is that long),
 * with an ellipsis.
 */
export function excerpt(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  const room = flat.slice(0, max - 1);
  const space = room.lastIndexOf(' ');
  const cut = space >= max * 0.6 ? room.slice(0, space) : room;
  return `${cut.replace(/[\s,;:.–—-]+$/, '')}…`;
}
