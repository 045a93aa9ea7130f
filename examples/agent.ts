/**
 * An agent's memory loop with the typed client: remember what happened, ask for context under
 * a budget, cite where an answer comes from, and explore the entity it is about.
 *
 *   npm start                                      # in another terminal
 *   npm run codegen && npx tsx examples/agent.ts   # MEMGATE_URL / MEMGATE_TOKEN point it elsewhere
 */
import { createMemgateClient } from 'memgate/client';

const memgate = createMemgateClient({
  url: process.env.MEMGATE_URL ?? 'http://127.0.0.1:4000/graphql',
  token: process.env.MEMGATE_TOKEN,
});
const namespace = process.env.MEMGATE_NAMESPACE ?? 'example';

// Writes: an observation (the event), and the facts it supports.
const recorded = await memgate.recordObservations({
  namespace,
  observations: [
    {
      source: { system: 'chat', externalId: 'example-1' },
      kind: 'message',
      occurredAt: '2024-05-01T09:00:00Z',
      content: 'Dana (Globex) says their team moved from the Starter plan to Enterprise.',
    },
  ],
});
const evidence = recorded.results[0]!.key!;
const asserted = await memgate.assertFacts({
  namespace,
  facts: [{ subject: 'globex', predicate: 'on_plan', object: 'starter', validFrom: '2024-01-01T00:00:00Z' }],
});
await memgate.supersedeFact({
  namespace,
  factId: asserted.results[0]!.key!,
  by: {
    subject: 'globex',
    predicate: 'on_plan',
    object: 'enterprise',
    validFrom: '2024-05-01T09:00:00Z',
    observationIds: [evidence],
  },
});

// Context: what the agent should know before it answers.
const pack = await memgate.context({
  input: {
    namespaces: [namespace],
    query: 'Which plan is Globex on?',
    anchors: ['globex'],
    budgetTokens: 800,
  },
});
console.log(`context (${pack.tokenEstimate} tokens, trace ${pack.traceId}):\n${pack.text}`);

// Provenance: cite the fact the answer rests on.
const fact = pack.sections.flatMap((s) => s.items).find((item) => item.kind === 'fact');
if (fact) {
  const trail = await memgate.provenance({ id: fact.id });
  for (const step of trail.steps) console.log(`${'  '.repeat(step.depth)}${step.kind}: ${step.label}`);
}

// Explore: the entity now and as it was in March.
for (const asOf of [undefined, '2024-03-01T00:00:00Z']) {
  const globex = await memgate.entity({ namespace, key: 'globex', asOf });
  const plans = globex?.facts.edges.map((e) => `${e.node.predicate} ${e.node.object.key}`);
  console.log(`globex ${asOf ? `as of ${asOf}` : 'now'}: ${plans?.join(', ')}`);
}
