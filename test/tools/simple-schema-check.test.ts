import { Ajv } from 'ajv';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { JsonSchema } from '../../src/index.ts';
import { builtinTools } from '../../src/index.ts';
import { simpleSchemaCheck } from '../../src/tools/simple-schema-check.ts';
import { validateToolArguments } from '../../src/tools/tool-arguments.ts';
import { sandbox } from './support.ts';

const box = sandbox('rein-simple-schema-');
afterAll(() => box.cleanup());

// The reference: the ajv configuration tool-arguments.ts uses.
const ajv = new Ajv({ allErrors: true, strict: false, logger: false });

const builtinSchemas: [string, JsonSchema][] = [
  ...builtinTools({ workspace: box.workspace, reinHome: box.reinHome }),
  ...builtinTools({ workspace: box.workspace, reinHome: box.reinHome, sandbox: true }).filter(
    (tool) => tool.name === 'bash',
  ),
].map((tool) => [tool.name, tool.parameters as JsonSchema]);

// Every keyword the check handles, alone and nested.
const keywordSchemas: [string, JsonSchema][] = [
  ['type list', { type: ['string', 'null'] }],
  ['number range', { type: 'number', minimum: -1.5, maximum: 10 }],
  ['exclusive range', { exclusiveMinimum: 0, exclusiveMaximum: 3 }],
  ['integer', { type: 'integer' }],
  ['lengths', { type: 'string', minLength: 2, maxLength: 3 }],
  ['enum', { enum: ['a', 1, true, null] }],
  ['const', { const: 'x' }],
  ['array', { type: 'array', items: { type: 'integer', minimum: 0 }, minItems: 1, maxItems: 3 }],
  ['untyped object keywords', { required: ['a'], properties: { a: { type: 'boolean' } } }],
  [
    'additional schema',
    { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'number' } },
  ],
  [
    'nested',
    {
      type: 'object',
      properties: {
        list: {
          type: 'array',
          maxItems: 2,
          items: {
            type: 'object',
            properties: { status: { enum: ['pending', 'done'] }, text: { type: 'string', minLength: 1 } },
            required: ['status', 'text'],
            additionalProperties: false,
          },
        },
      },
      required: ['list'],
      additionalProperties: false,
      title: 'Nested',
      description: 'annotations are ignored',
      default: {},
      examples: [{ list: [] }],
    },
  ],
];

const keys = ['a', 'path', 'command', 'content', 'todos', 'status', 'text', 'list', 'offset', 'limit'];
const leaf = fc.oneof(
  fc.string({ maxLength: 4 }),
  fc.constantFrom('', 'a', 'ab', 'abc', '😀😀', 'pending', 'done', 'x', 'src'),
  fc.integer({ min: -3, max: 700_000 }),
  fc.double({ noNaN: false }),
  fc.constantFrom(0, 1, 2, 3, 100, 101, 600_000, 600_001, 1.5, -0),
  fc.boolean(),
  fc.constant(null),
);
const value = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('node'), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom(...keys), tie('node'), { maxKeys: 5 }),
  ),
})).node;

describe('simpleSchemaCheck: the same verdict as ajv', () => {
  for (const [name, schema] of [...builtinSchemas, ...keywordSchemas]) {
    it(`${name}`, () => {
      const check = simpleSchemaCheck(schema);
      expect(check, `${name} takes the fast path`).toBeDefined();
      const reference = ajv.compile(schema);
      fc.assert(
        fc.property(value, (candidate) => {
          expect(check!(candidate)).toBe(reference(candidate));
        }),
        { numRuns: 3_000 },
      );
    });
  }

  it('accepts the built-in tools’ typical arguments', () => {
    const byName = new Map(builtinSchemas);
    expect(simpleSchemaCheck(byName.get('read_file')!)!({ path: 'README.md', offset: 2 })).toBe(true);
    expect(simpleSchemaCheck(byName.get('bash')!)!({ command: 'wc -l README.md', network: true })).toBe(true);
    expect(simpleSchemaCheck(byName.get('bash')!)!({ command: '' })).toBe(false);
    expect(simpleSchemaCheck(byName.get('read_file')!)!({ path: 'a', extra: 1 })).toBe(false);
  });
});

describe('simpleSchemaCheck: leaves everything else to ajv', () => {
  const others: [string, unknown][] = [
    ['a pattern', { type: 'string', pattern: '^a' }],
    ['a format', { type: 'string', format: 'uri' }],
    ['a $ref', { $ref: '#/definitions/x', definitions: { x: {} } }],
    ['oneOf', { oneOf: [{ type: 'string' }, { type: 'number' }] }],
    ['an unknown type', { type: 'strin' }],
    ['a duplicate required', { required: ['a', 'a'] }],
    ['an empty enum', { enum: [] }],
    ['an object enum', { enum: [{ a: 1 }] }],
    ['a negative length', { minLength: -1 }],
    ['a boolean subschema', { properties: { a: true } }],
    ['tuple items', { items: [{ type: 'string' }] }],
    ['a $schema', { $schema: 'https://json-schema.org/draft/2020-12/schema' }],
    ['a draft-04 exclusive minimum', { minimum: 1, exclusiveMinimum: true }],
  ];
  for (const [name, schema] of others) {
    it(name, () => expect(simpleSchemaCheck(schema as JsonSchema)).toBeUndefined());
  }
});

describe('validateToolArguments with the fast path', () => {
  const tool = { name: 't', description: '', execute: () => '' };

  it('words refusals as ajv does, field by field', () => {
    const parameters = {
      type: 'object',
      properties: { path: { type: 'string', minLength: 1 }, offset: { type: 'integer', minimum: 1 } },
      required: ['path'],
      additionalProperties: false,
    };
    expect(validateToolArguments({ ...tool, parameters }, { offset: 0, other: 1 })).toEqual({
      ok: false,
      message:
        "path: must have required property 'path'; (root): must NOT have additional properties; " +
        'offset: must be >= 1',
    });
    expect(validateToolArguments({ ...tool, parameters }, { path: 'a' })).toEqual({
      ok: true,
      value: { path: 'a' },
    });
  });

  it('still refuses a schema ajv cannot compile', () => {
    expect(() =>
      validateToolArguments(
        { ...tool, parameters: { type: 'object', properties: { a: { type: 'strin' } } } },
        {},
      ),
    ).toThrow();
  });
});
