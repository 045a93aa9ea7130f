import cytoscape, { type Core, type ElementDefinition } from 'cytoscape';
import type { ExplorerEntityQuery, ExplorerFactFragment } from '../generated/graphql.js';
import { kindColour } from './dom.js';

type Entity = NonNullable<ExplorerEntityQuery['entity']>;

export interface GraphHandlers {
  openEntity(key: string): void;
  openProvenance(id: string, label: string): void;
}

/**
 * The neighbourhood of one entity as of the slider's time: facts valid then are solid edges
 * (red when in an open conflict), facts that had closed by then (superseded, retracted,
 * evidence lost, or past validTo) are dashed grey. Rings by distance: 1 hop, then 2 hops.
 */
export function drawNeighbourhood(container: HTMLElement, entity: Entity, handlers: GraphHandlers): Core {
  const nodes = new Map<string, ElementDefinition>();
  const edges = new Map<string, ElementDefinition>();
  const addNode = (key: string, title: string, kind: string, distance: number) => {
    // Nearest first: the neighbours (with their true distance) are added before history endpoints.
    if (nodes.has(key)) return;
    nodes.set(key, {
      data: { id: key, label: title, colour: kindColour(kind), distance },
      classes: distance === 0 ? 'centre' : '',
    });
  };
  const addEdge = (fact: ExplorerFactFragment, closed: boolean) => {
    if (edges.has(fact.id)) return;
    edges.set(fact.id, {
      data: {
        id: fact.id,
        source: fact.subject.key,
        target: fact.object.key,
        label: closed ? `${fact.predicate} (${fact.status.toLowerCase().replace('_', ' ')})` : fact.predicate,
      },
      classes: [closed ? 'closed' : '', fact.conflict ? 'conflict' : ''].join(' ').trim(),
    });
  };

  addNode(entity.key, entity.title, entity.kind, 0);
  for (const n of entity.neighbors) addNode(n.entity.key, n.entity.title, n.entity.kind, n.distance);
  for (const n of entity.neighbors) addEdge(n.via, false);
  const valid = new Set(entity.current.edges.map((e) => e.node.id));
  for (const { node: fact } of entity.history.edges) {
    const closed = !valid.has(fact.id);
    for (const end of [fact.subject, fact.object]) {
      if (end.key !== entity.key) addNode(end.key, end.title, end.kind, 1);
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
    wheelSensitivity: 0.2,
    minZoom: 0.3,
    maxZoom: 2.5,
    style: [
      {
        selector: 'node',
        style: {
          'background-color': 'data(colour)',
          label: 'data(label)',
          color: '#1e293b',
          'font-size': 14,
          'text-valign': 'bottom',
          'text-margin-y': 4,
          width: 22,
          height: 22,
          'border-width': 2,
          'border-color': '#fff',
        },
      },
      {
        selector: 'node.centre',
        style: { width: 40, height: 40, 'font-size': 16, 'font-weight': 'bold', 'border-color': '#1e293b' },
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
          'font-size': 12,
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
          color: '#94a3b8',
        },
      },
      {
        selector: 'edge.conflict',
        style: { 'line-color': '#dc2626', 'target-arrow-color': '#dc2626', color: '#b91c1c' },
      },
    ],
    layout: {
      name: 'concentric',
      concentric: (node) => 3 - (node.data('distance') as number),
      levelWidth: () => 1,
      minNodeSpacing: 50,
      spacingFactor: 1,
      avoidOverlap: true,
      nodeDimensionsIncludeLabels: true,
      padding: 24,
      animate: false,
    },
  });
  cy.on('tap', 'node', (event) => {
    const key = event.target.id() as string;
    if (key !== entity.key) handlers.openEntity(key);
  });
  cy.on('tap', 'edge', (event) => {
    handlers.openProvenance(event.target.id() as string, event.target.data('label') as string);
  });
  return cy;
}
