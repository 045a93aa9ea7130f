import cytoscape, { type Core, type ElementDefinition, type StylesheetJson } from 'cytoscape';
import type { ExplorerEntityQuery, ExplorerFactFragment } from '../generated/graphql.js';
import { kindColour } from './dom.js';

type Entity = NonNullable<ExplorerEntityQuery['entity']>;

export interface GraphHandlers {
  openEntity(key: string): void;
  openProvenance(id: string, label: string): void;
}

/** Label sizes in graph units: what a person reads at zoom 1. */
const FONT = { node: 14, centre: 16, edge: 13 } as const;
/**
 * The smallest zoom the graph is drawn or zoomed out to: every label then renders at 11 px or
 * more (an edge's 13 px × 0.85). A neighbourhood too large for the canvas at this zoom makes the
 * canvas taller (up to MAX_HEIGHT), and beyond that is panned rather than shrunk.
 */
export const MIN_ZOOM = 0.85;
/** Fitting never blows a small neighbourhood up beyond this (a person may zoom in further). */
const FIT_MAX_ZOOM = 1.5;
const PADDING = 24;
const MAX_HEIGHT = 680;

/**
 * The neighbourhood of one entity as of the slider's time: facts valid then are solid edges
 * (red when in an open conflict), facts that had closed by then (superseded, retracted,
 * evidence lost, or past validTo) are dashed grey. A radial tree: the 1-hop neighbours around
 * the entity, each 2-hop neighbour beyond the neighbour it is reached through.
 */
export function drawNeighbourhood(container: HTMLElement, entity: Entity, handlers: GraphHandlers): Core {
  const nodes = new Map<string, ElementDefinition>();
  const edges = new Map<string, ElementDefinition>();
  const addNode = (key: string, title: string, kind: string, distance: number, through: string | null) => {
    // Nearest first: the neighbours (with their true distance) are added before history endpoints.
    if (nodes.has(key)) return;
    nodes.set(key, {
      data: { id: key, label: title, colour: kindColour(kind), distance, through },
      classes: distance === 0 ? 'centre' : '',
    });
  };
  const addEdge = (fact: ExplorerFactFragment, closed: boolean) => {
    if (edges.has(fact.id)) return;
    const status = fact.status.toLowerCase().replace('_', ' ');
    edges.set(fact.id, {
      data: {
        id: fact.id,
        source: fact.subject.key,
        target: fact.object.key,
        // A closed fact's status goes on a second line: labels stay about as long as their edges.
        label: closed ? `${fact.predicate}\n(${status})` : fact.predicate,
        title: closed ? `${fact.predicate} (${status})` : fact.predicate,
      },
      classes: [closed ? 'closed' : '', fact.conflict ? 'conflict' : ''].join(' ').trim(),
    });
  };

  addNode(entity.key, entity.title, entity.kind, 0, null);
  for (const n of entity.neighbors) {
    addNode(n.entity.key, n.entity.title, n.entity.kind, n.distance, n.through?.key ?? null);
  }
  for (const n of entity.neighbors) addEdge(n.via, false);
  const valid = new Set(entity.current.edges.map((e) => e.node.id));
  for (const { node: fact } of entity.history.edges) {
    const closed = !valid.has(fact.id);
    for (const end of [fact.subject, fact.object]) {
      if (end.key !== entity.key) addNode(end.key, end.title, end.kind, 1, null);
    }
    addEdge(fact, closed);
  }

  // What is drawn, for people using assistive tools (and for the browser tests).
  const edgeList = [...edges.values()];
  container.setAttribute('aria-label', `Graph of ${nodes.size} entities and ${edges.size} facts`);
  container.dataset.keys = [...nodes.keys()].join(' ');
  container.dataset.closed = String(edgeList.filter((e) => e.classes?.includes('closed')).length);
  container.dataset.conflicts = String(edgeList.filter((e) => e.classes?.includes('conflict')).length);
  const cy = cytoscape({
    container,
    elements: [...nodes.values(), ...edges.values()],
    minZoom: MIN_ZOOM,
    maxZoom: 2.5,
    style: STYLE,
  });
  cy.layout({
    name: 'preset',
    positions: radialPositions(cy),
    fit: false,
    animate: false,
  }).run();
  fitLegibly(cy, container, entity.key);
  cy.on('tap', 'node', (event) => {
    const key = event.target.id() as string;
    if (key !== entity.key) handlers.openEntity(key);
  });
  cy.on('tap', 'edge', (event) => {
    handlers.openProvenance(event.target.id() as string, event.target.data('title') as string);
  });
  return cy;
}

const STYLE: StylesheetJson = [
  {
    selector: 'node',
    style: {
      'background-color': 'data(colour)',
      label: 'data(label)',
      color: '#1e293b',
      'font-size': FONT.node,
      'text-valign': 'bottom',
      'text-wrap': 'wrap',
      'text-max-width': '120px',
      'text-margin-y': 4,
      // Labels stay readable where edges cross them.
      'text-background-color': '#f8fafc',
      'text-background-opacity': 0.8,
      'text-background-padding': '1px',
      width: 22,
      height: 22,
      'border-width': 2,
      'border-color': '#fff',
    },
  },
  {
    selector: 'node.centre',
    style: {
      width: 40,
      height: 40,
      'font-size': FONT.centre,
      'font-weight': 'bold',
      'border-color': '#1e293b',
    },
  },
  {
    selector: 'edge',
    style: {
      width: 2,
      'line-color': '#64748b',
      'target-arrow-color': '#64748b',
      'target-arrow-shape': 'triangle',
      'curve-style': 'bezier',
      label: 'data(label)',
      'font-size': FONT.edge,
      'text-wrap': 'wrap',
      color: '#475569',
      'text-background-color': '#fff',
      'text-background-opacity': 0.85,
      'text-background-padding': '2px',
      'text-rotation': 'autorotate',
    },
  },
  {
    selector: 'edge.closed',
    style: {
      'line-style': 'dashed',
      'line-color': '#cbd5e1',
      'target-arrow-color': '#cbd5e1',
      // Fainter than a valid fact's label, still readable (4.7:1 on white).
      color: '#64748b',
    },
  },
  {
    selector: 'edge.conflict',
    style: { 'line-color': '#dc2626', 'target-arrow-color': '#dc2626', color: '#b91c1c' },
  },
];

/** A 1-hop neighbour (none for a 2-hop node without one) and the 2-hop nodes beyond it. */
interface Sector {
  key: string | null;
  outer: string[];
}

/** Graph units: the least distance from the centre to the 1-hop ring, and between the rings. */
const RING = { first: 150, next: 125 } as const;

/**
 * Positions of a radial tree around (0, 0): every 1-hop neighbour gets a sector as wide as the
 * 2-hop neighbours reached through it (one share at least), and sits in its middle; those
 * 2-hop neighbours spread across it on the outer ring (one with no known first hop gets a
 * share of its own). Rings are far enough apart for an edge's label, and wide enough for the
 * widest node label between neighbours on a ring.
 */
function radialPositions(cy: Core): Record<string, { x: number; y: number }> {
  const byDistance = (d: (n: number) => boolean) => cy.nodes().filter((n) => d(n.data('distance') as number));
  const first = byDistance((d) => d === 1).map((n) => n.id());
  const beyond = new Map<string, string[]>(first.map((k) => [k, []]));
  const sectors: { key: string | null; outer: string[] }[] = first.map((key) => ({
    key,
    outer: beyond.get(key)!,
  }));
  for (const n of byDistance((d) => d >= 2)) {
    const through = beyond.get(n.data('through') as string);
    if (through) through.push(n.id());
    else sectors.push({ key: null, outer: [n.id()] });
  }
  // A 2-hop node also linked to the centre (by a closed fact) goes to its sector's side, so
  // that edge does not run through the neighbour in the middle.
  const direct = new Set(
    cy
      .nodes('.centre')
      .neighborhood('node')
      .map((n) => n.id()),
  );
  for (const s of sectors) s.outer = aside(s.outer, direct);
  const shares = sectors.reduce((sum, s) => sum + Math.max(1, s.outer.length), 0);
  const share = (2 * Math.PI) / Math.max(1, shares);
  const slot = 16 + Math.max(0, ...cy.nodes().map((n) => n.boundingBox({ includeLabels: true }).w));
  // The chord between two neighbours `angle` apart on a ring of radius r is 2r·sin(angle/2).
  const radiusFor = (angle: number) => slot / (2 * Math.sin(Math.min(angle, Math.PI) / 2));
  const r1 = Math.max(RING.first, first.length > 1 ? radiusFor(minFirstGap(sectors, share)) : 0);
  const r2 = Math.max(r1 + RING.next, radiusFor(share));
  const positions: Record<string, { x: number; y: number }> = {};
  const at = (r: number, angle: number) => ({ x: r * Math.cos(angle), y: r * Math.sin(angle) });
  for (const centre of cy.nodes('.centre')) positions[centre.id()] = { x: 0, y: 0 };
  let start = -Math.PI / 2 - (Math.max(1, sectors[0]?.outer.length ?? 1) * share) / 2;
  for (const s of sectors) {
    const width = Math.max(1, s.outer.length) * share;
    if (s.key) positions[s.key] = at(r1, start + width / 2);
    s.outer.forEach((key, j) => {
      // Alone behind its neighbour and linked to the centre too: half a share aside.
      const nudge = s.outer.length === 1 && direct.has(key) ? share / 2 : 0;
      positions[key] = at(r2, start + (j + 0.5) * share + nudge);
    });
    start += width;
  }
  return positions;
}

/** The keys with those in `ends` moved to both ends, alternately (first, last, second…). */
function aside(keys: string[], ends: Set<string>): string[] {
  const linked = keys.filter((k) => ends.has(k));
  const rest = keys.filter((k) => !ends.has(k));
  const head = linked.filter((_, i) => i % 2 === 0);
  const tail = linked.filter((_, i) => i % 2 === 1).reverse();
  return [...head, ...rest, ...tail];
}

/** The smallest angle between two consecutive 1-hop neighbours (each in its sector's middle). */
function minFirstGap(sectors: Sector[], share: number): number {
  const middles: number[] = [];
  let start = 0;
  for (const s of sectors) {
    const width = Math.max(1, s.outer.length) * share;
    if (s.key) middles.push(start + width / 2);
    start += width;
  }
  let gap = 2 * Math.PI;
  middles.forEach((m, i) => {
    const next = i + 1 < middles.length ? middles[i + 1]! : middles[0]! + 2 * Math.PI;
    gap = Math.min(gap, next - m);
  });
  return gap;
}

/**
 * Fits the drawing without letting labels shrink below legibility: when the whole neighbourhood
 * needs a smaller zoom than MIN_ZOOM, the canvas grows taller first; what still does not fit
 * is drawn at MIN_ZOOM around the centre entity, to be panned. Records the outcome on the
 * canvas (zoom, smallest label in CSS pixels) for assistive tools and the browser tests.
 */
function fitLegibly(cy: Core, container: HTMLElement, centre: string): void {
  const box = cy.elements().boundingBox();
  const wanted = Math.ceil(box.h * MIN_ZOOM + 2 * PADDING);
  if (container.clientHeight > 0 && wanted > container.clientHeight) {
    container.style.height = `${Math.min(MAX_HEIGHT, wanted)}px`;
    cy.resize();
  }
  cy.fit(undefined, PADDING);
  const fits =
    box.w * cy.zoom() <= cy.width() - 2 * PADDING + 1 && box.h * cy.zoom() <= cy.height() - 2 * PADDING + 1;
  if (!fits) cy.center(cy.getElementById(centre));
  if (cy.zoom() > FIT_MAX_ZOOM) {
    cy.zoom(FIT_MAX_ZOOM);
    cy.center();
  }
  const smallest = Math.min(...cy.elements().map((e) => e.numericStyle('font-size') as number));
  container.dataset.zoom = cy.zoom().toFixed(3);
  container.dataset.labelPx = (smallest * cy.zoom()).toFixed(1);
  container.dataset.fits = String(fits);
}
