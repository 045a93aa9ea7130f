import { buildSchema, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { maskResultData } from '../../src/security/pii-masking.js';

const schema = buildSchema(`
  scalar JSON
  scalar DateTime
  interface Node { id: ID! }
  type Person implements Node { id: ID! key: String! title: String note: String data: JSON at: DateTime friends: [Person!]! }
  type Query { person: Person node(id: ID!): Node people: [Person!]! }
`);

const EMAIL = 'ann@example.com';

describe('maskResultData: masking where a result leaves the gateway', () => {
  it('masks String and JSON values along the operation, through aliases, fragments and lists', () => {
    const document = parse(`
      query Q { p: person { k: key t: title ...More friends { note } } node(id: "1") { id ... on Person { note } } }
      fragment More on Person { data at id }
    `);
    const data = {
      p: {
        k: EMAIL,
        t: `mail ${EMAIL}`,
        data: { contact: [EMAIL] },
        at: '2024-05-02T10:00:00.000Z',
        id: EMAIL,
        friends: [{ note: `call +1 415 555 0144` }],
      },
      node: { id: '1', note: EMAIL },
    };
    maskResultData(schema, document, 'Q', data);
    expect(data).toEqual({
      p: {
        // Keys and ids are identifiers; DateTime is not text.
        k: EMAIL,
        t: 'mail [email]',
        data: { contact: ['[email]'] },
        at: '2024-05-02T10:00:00.000Z',
        id: EMAIL,
        friends: [{ note: 'call [phone]' }],
      },
      node: { id: '1', note: '[email]' },
    });
  });

  it('masks the operation named, and leaves null data alone', () => {
    const document = parse('query A { person { note } } query B { people { note } }');
    const data = { people: [{ note: EMAIL }] };
    maskResultData(schema, document, 'B', data);
    expect(data.people[0]!.note).toBe('[email]');
    expect(() => maskResultData(schema, document, 'A', null)).not.toThrow();
  });
});
