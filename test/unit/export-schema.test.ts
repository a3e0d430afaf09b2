import { expect } from 'chai';
import { readExportSchema } from '../../core/memory/export-schema.js';
import { AppError } from '../../lib/errors.js';

/** The 400 code `readExportSchema` refuses `schema` with. */
function refusal(schema: unknown): string {
  try {
    readExportSchema(schema);
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    return `${(err as AppError).status} ${(err as AppError).code}`;
  }
  throw new Error('expected a refusal');
}

describe('memory export schemas (Pydantic JSON Schema into the extraction subset)', () => {
  it("reads Optional fields, $ref'd enums, lists of strings and Pydantic v1 definitions; keeps descriptions, else titles; drops constraints", () => {
    const read = readExportSchema({
      title: 'Profile',
      type: 'object',
      definitions: { Level: { enum: ['junior', 'senior'], title: 'Level', type: 'string' } },
      $defs: { Shift: { enum: ['day', 'night'], title: 'Shift', type: 'string', description: 'When they work' } },
      properties: {
        name: { anyOf: [{ type: 'string', maxLength: 100, minLength: 2 }, { type: 'null' }], default: null, title: 'Name', description: 'Full name' },
        age: { type: ['integer', 'null'], minimum: 0, title: 'Age' },
        shift: { anyOf: [{ $ref: '#/$defs/Shift' }, { type: 'null' }], default: null },
        level: { allOf: [{ $ref: '#/definitions/Level' }], description: 'Seniority' },
        remote: { type: 'boolean' },
        score: { oneOf: [{ type: 'number', exclusiveMaximum: 10 }, { type: 'null' }] },
        skills: { anyOf: [{ type: 'array', items: { type: 'string' }, maxItems: 5 }, { type: 'null' }], title: 'Skills' },
        kind: { const: 'nurse', type: 'string' },
      },
    });
    expect(read.extraction).to.deep.equal({
      type: 'object',
      description: 'Profile',
      properties: {
        name: { type: 'string', description: 'Full name' },
        age: { type: 'integer', description: 'Age' },
        shift: { type: 'string', enum: ['day', 'night'], description: 'When they work' },
        level: { type: 'string', enum: ['junior', 'senior'], description: 'Seniority' },
        remote: { type: 'boolean' },
        score: { type: 'number' },
        skills: { type: 'array', items: { type: 'string' }, description: 'Skills' },
        kind: { type: 'string', enum: ['nurse'] },
      },
    });
    expect(read.unsupported).to.deep.equal([]);
    expect(read.fields).to.deep.equal(['name', 'age', 'shift', 'level', 'remote', 'score', 'skills', 'kind']);
  });

  it('lists what extraction cannot fill, with why, and keeps every field', () => {
    const read = readExportSchema(
      JSON.stringify({
        $defs: { Address: { type: 'object', properties: { street: { type: 'string' } } }, Loop: { $ref: '#/$defs/Loop' } },
        properties: {
          name: { type: 'string' },
          address: { anyOf: [{ $ref: '#/$defs/Address' }, { type: 'null' }] },
          jobs: { type: 'array', items: { $ref: '#/$defs/Address' } },
          either: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
          missing: { $ref: '#/$defs/Nowhere' },
          loop: { $ref: '#/$defs/Loop' },
          untyped: {},
          counts: { type: 'array', items: { type: 'integer' } },
        },
      }),
    );
    expect(Object.keys(read.extraction.properties)).to.deep.equal(['name']);
    expect(read.fields).to.deep.equal(['name', 'address', 'jobs', 'either', 'missing', 'loop', 'untyped', 'counts']);
    expect(read.unsupported.map((u) => u.field)).to.deep.equal(['address', 'jobs', 'either', 'missing', 'loop', 'untyped', 'counts']);
    expect(read.unsupported[0]).to.deep.equal({ field: 'address', reason: 'a nested object' });
  });

  it('refuses what is not an object schema with a usable field: 400 invalid_schema', () => {
    expect(refusal('{"properties": ')).to.equal('400 invalid_schema');
    expect(refusal('[1]')).to.equal('400 invalid_schema');
    expect(refusal({ type: 'array', items: { type: 'string' } })).to.equal('400 invalid_schema');
    expect(refusal({ type: 'object' })).to.equal('400 invalid_schema');
    expect(refusal({ properties: { address: { type: 'object' } } })).to.equal('400 invalid_schema');
  });
});
