import { expect } from 'chai';
import { AppError } from '../../lib/errors.js';
import {
  assertDefinition,
  checkEmbedTemplate,
  checkRecordSchema,
  defaultEmbedTemplate,
  recordValidator,
  renderEmbedText,
  validateRecord,
  type RecordJsonSchema,
  type SchemaVersion,
} from '../../core/schemas.js';
import { SCHEMA_PRESETS, type SchemaPreset } from '../../core/schema-presets.js';

const LEAD: RecordJsonSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'Full name' },
    email: { type: 'string' },
    seats: { type: 'integer' },
    budget: { type: 'number' },
    active: { type: 'boolean' },
    stage: { type: 'string', enum: ['new', 'won'] },
    tags: { type: 'array', items: { type: 'string' } },
  },
  required: ['name', 'email'],
};

const version = (jsonSchema: RecordJsonSchema, template?: string): SchemaVersion => ({
  schema_id: 'sid',
  project_id: 'pid',
  name: 'lead',
  version: 3,
  json_schema: jsonSchema,
  embed_template: template ?? defaultEmbedTemplate(jsonSchema),
  retention: null,
  description: null,
  created_at: 0,
});

/** The paths of the violations `checkRecordSchema` finds, each with its message. */
const problems = (schema: unknown) => checkRecordSchema(schema);
const paths = (schema: unknown) => problems(schema).map((e) => e.path);

const withProperty = (property: unknown, extra: Record<string, unknown> = {}) => ({ type: 'object', properties: { p: property }, ...extra });

function caught(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected an error');
}

describe('record schema subset', () => {
  it('accepts every allowed property form and the allowed root keywords', () => {
    expect(problems(LEAD)).to.deep.equal([]);
    expect(problems({ ...LEAD, additionalProperties: false, title: 'Lead', description: 'A lead' })).to.deep.equal([]);
  });

  it('accepts all five presets unchanged', () => {
    expect(SCHEMA_PRESETS.map((p) => p.name)).to.deep.equal(['link', 'observation', 'action-item', 'decision', 'lead-profile']);
    for (const preset of SCHEMA_PRESETS) {
      expect(problems(preset.json_schema), preset.name).to.deep.equal([]);
      expect(checkEmbedTemplate(preset.embed_template, Object.keys(preset.json_schema.properties)), preset.name).to.deep.equal([]);
      for (const [name, property] of Object.entries(preset.json_schema.properties)) {
        expect(property.description, `${preset.name}.${name}`).to.be.a('string').and.not.equal('');
      }
    }
  });

  it('requires a JSON object at the root', () => {
    for (const bad of [null, [], 'object', 3]) {
      expect(problems(bad)).to.have.length(1);
      expect(problems(bad)[0]).to.include({ path: '/json_schema' });
    }
  });

  it('requires type "object" at the root', () => {
    expect(paths({ properties: { a: { type: 'string' } } })).to.deep.equal(['/json_schema/type']);
    expect(paths({ type: 'array', properties: { a: { type: 'string' } } })).to.deep.equal(['/json_schema/type']);
  });

  it('refuses root keywords outside the subset, naming each', () => {
    const errs = problems({ ...LEAD, $schema: 'x', $defs: {}, minProperties: 1, allOf: [] });
    expect(errs.map((e) => e.path)).to.have.members(['/json_schema/$schema', '/json_schema/$defs', '/json_schema/minProperties', '/json_schema/allOf']);
    expect(errs[0]?.message).to.match(/type, properties, required, additionalProperties, description, title/);
  });

  it('requires properties: an object with 1 to 32 entries', () => {
    expect(paths({ type: 'object' })).to.deep.equal(['/json_schema/properties']);
    expect(paths({ type: 'object', properties: [] })).to.deep.equal(['/json_schema/properties']);
    expect(paths({ type: 'object', properties: {} })).to.deep.equal(['/json_schema/properties']);
    const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, { type: 'string' }]));
    expect(problems({ type: 'object', properties: many(32) })).to.deep.equal([]);
    const over = problems({ type: 'object', properties: many(33) });
    expect(over).to.have.length(1);
    expect(over[0]).to.include({ path: '/json_schema/properties' });
    expect(over[0]?.message).to.match(/33.*32/);
  });

  it('restricts property names, because they are placeholders and filter keys', () => {
    for (const bad of ['Name', '1st', 'first-name', 'a b', 'x'.repeat(65), '']) {
      const errs = problems({ type: 'object', properties: { [bad]: { type: 'string' } } });
      expect(errs, bad).to.have.length(1);
      expect(errs[0]?.message).to.match(/placeholders/);
    }
    expect(paths({ type: 'object', properties: { 'a/b': { type: 'string' } } })).to.deep.equal(['/json_schema/properties/a~1b']);
    expect(problems({ type: 'object', properties: { _id: { type: 'string' }, a1_b: { type: 'string' } } })).to.deep.equal([]);
    expect(paths(JSON.parse('{"type": "object", "properties": {"__proto__": {"type": "string"}}}'))).to.deep.equal(['/json_schema/properties/__proto__']);
  });

  it('allows only the subset types, and no nested objects', () => {
    expect(paths(withProperty({ type: 'object', properties: {} }))).to.have.members(['/json_schema/properties/p/type', '/json_schema/properties/p/properties']);
    expect(problems(withProperty({ type: 'object' }))[0]?.message).to.match(/one level/);
    for (const type of ['null', 'date', ['string', 'null'], undefined]) {
      expect(paths(withProperty(type === undefined ? {} : { type })), String(type)).to.deep.equal(['/json_schema/properties/p/type']);
    }
    expect(paths({ type: 'object', properties: { p: 'string' } })).to.deep.equal(['/json_schema/properties/p']);
  });

  it('refuses every keyword a property form does not allow', () => {
    const cases: Array<[unknown, string]> = [
      [{ type: 'string', format: 'uri' }, 'format'],
      [{ type: 'string', pattern: '^a' }, 'pattern'],
      [{ type: 'string', maxLength: 3 }, 'maxLength'],
      [{ type: 'string', $ref: '#/x' }, '$ref'],
      [{ type: 'string', default: 'a' }, 'default'],
      [{ type: 'integer', minimum: 0 }, 'minimum'],
      [{ type: 'number', enum: ['1'] }, 'enum'],
      [{ type: 'boolean', const: true }, 'const'],
      [{ type: 'array', items: { type: 'string' }, maxItems: 2 }, 'maxItems'],
      [{ type: 'array', items: { type: 'string' }, enum: ['a'] }, 'enum'],
    ];
    for (const [property, keyword] of cases) {
      expect(paths(withProperty(property)), keyword).to.deep.equal([`/json_schema/properties/p/${keyword}`]);
    }
  });

  it('checks enums: non-empty, non-empty unique strings', () => {
    expect(paths(withProperty({ type: 'string', enum: [] }))).to.deep.equal(['/json_schema/properties/p/enum']);
    expect(paths(withProperty({ type: 'string', enum: 'a' }))).to.deep.equal(['/json_schema/properties/p/enum']);
    expect(paths(withProperty({ type: 'string', enum: ['a', 1, '', 'a'] }))).to.deep.equal([
      '/json_schema/properties/p/enum/1',
      '/json_schema/properties/p/enum/2',
      '/json_schema/properties/p/enum/3',
    ]);
  });

  it('allows arrays of strings only', () => {
    expect(paths(withProperty({ type: 'array' }))).to.deep.equal(['/json_schema/properties/p/items']);
    for (const items of [{ type: 'integer' }, { type: 'object' }, { type: 'string', minLength: 1 }, [{ type: 'string' }], { type: 'array', items: { type: 'string' } }]) {
      expect(paths(withProperty({ type: 'array', items })), JSON.stringify(items)).to.deep.equal(['/json_schema/properties/p/items']);
    }
  });

  it('checks required: an array of unique names of properties', () => {
    expect(paths({ ...LEAD, required: 'name' })).to.deep.equal(['/json_schema/required']);
    const errs = problems({ ...LEAD, required: ['name', 'phone', 'name', 3] });
    expect(errs.map((e) => e.path)).to.deep.equal(['/json_schema/required/1', '/json_schema/required/2', '/json_schema/required/3']);
    expect(errs[0]?.message).to.match(/"phone".*not in properties/);
    expect(errs[1]?.message).to.match(/repeats "name"/);
  });

  it('allows additionalProperties only as false', () => {
    expect(paths({ ...LEAD, additionalProperties: true })).to.deep.equal(['/json_schema/additionalProperties']);
    expect(paths({ ...LEAD, additionalProperties: { type: 'string' } })).to.deep.equal(['/json_schema/additionalProperties']);
  });

  it('checks description and title are strings', () => {
    expect(paths({ ...LEAD, description: 3, title: {} })).to.have.members(['/json_schema/description', '/json_schema/title']);
    expect(paths(withProperty({ type: 'string', description: 1 }))).to.deep.equal(['/json_schema/properties/p/description']);
  });

  it('lists every violation at once', () => {
    const errs = problems({
      type: 'object',
      $id: 'x',
      properties: { Bad: { type: 'string' }, nested: { type: 'object' }, fmt: { type: 'string', format: 'email' }, arr: { type: 'array', items: { type: 'number' } } },
      required: ['missing'],
      additionalProperties: true,
    });
    expect(errs.map((e) => e.path)).to.have.members([
      '/json_schema/$id',
      '/json_schema/properties/Bad',
      '/json_schema/properties/nested/type',
      '/json_schema/properties/fmt/format',
      '/json_schema/properties/arr/items',
      '/json_schema/required/0',
      '/json_schema/additionalProperties',
    ]);
  });
});

describe('record schema definition (template and retention)', () => {
  it('names each unknown placeholder of an embed template', () => {
    const errs = checkEmbedTemplate('Hi {{name}} {{ phone }} {{ fax}} {{phone}}', ['name']);
    expect(errs.map((e) => e.message)).to.have.length(2);
    expect(errs[0]?.message).to.match(/\{\{phone\}\}/);
    expect(errs[1]?.message).to.match(/\{\{fax\}\}/);
    expect(checkEmbedTemplate('x'.repeat(4001), ['name'])[0]?.message).to.match(/4001.*4000/);
    expect(checkEmbedTemplate('  ', ['name'])).to.have.length(1);
  });

  it('throws invalid_schema with all problems of schema, template and retention', () => {
    const err = caught(() =>
      assertDefinition({
        json_schema: withProperty({ type: 'string', format: 'uri' }),
        embed_template: '{{nope}}',
        retention: { max_age_days: 0, forever: true },
      }),
    );
    expect(err.status).to.equal(400);
    expect(err.code).to.equal('invalid_schema');
    expect(err.errors?.map((e) => e.path)).to.have.members([
      '/json_schema/properties/p/format',
      '/embed_template',
      '/retention/max_age_days',
      '/retention/forever',
    ]);
  });

  it('accepts retention with max_age_days and/or max_count, or null; refuses an empty one', () => {
    for (const retention of [{ max_age_days: 30 }, { max_count: 5 }, { max_age_days: 1, max_count: 1 }, null]) {
      expect(() => assertDefinition({ json_schema: LEAD, retention })).not.to.throw();
    }
    for (const retention of [{}, { max_count: 1.5 }, { max_count: '5' }, 7]) {
      expect(caught(() => assertDefinition({ json_schema: LEAD, retention })).errors?.[0]?.path, JSON.stringify(retention)).to.match(/^\/retention/);
    }
  });

  it('builds the default template as one field: {{field}} line per property', () => {
    expect(defaultEmbedTemplate(LEAD)).to.equal(
      'name: {{name}}\nemail: {{email}}\nseats: {{seats}}\nbudget: {{budget}}\nactive: {{active}}\nstage: {{stage}}\ntags: {{tags}}',
    );
  });
});

describe('record validation', () => {
  const validate = (record: unknown, options?: { relaxRequired?: boolean }) => {
    try {
      validateRecord(version(LEAD), record, '/record', options);
      return [];
    } catch (err) {
      expect((err as AppError).code).to.equal('validation_failed');
      expect((err as AppError).status).to.equal(400);
      return (err as AppError).errors ?? [];
    }
  };

  it('accepts a valid record', () => {
    expect(validate({ name: 'Ada', email: 'ada@example.com', seats: 3, budget: 9.5, active: true, stage: 'won', tags: ['a', 'b'] })).to.deep.equal([]);
    expect(validate({ name: 'Ada', email: 'a@b.c', tags: [] })).to.deep.equal([]);
  });

  it('rejects unknown fields, even when the schema does not say additionalProperties', () => {
    const errs = validate({ name: 'Ada', email: 'a@b.c', phone: '1' });
    expect(errs).to.deep.equal([{ path: '/record/phone', message: 'is not a known field' }]);
  });

  it('distinguishes integer from number', () => {
    expect(validate({ name: 'Ada', email: 'a@b.c', seats: 2.5 }).map((e) => e.path)).to.deep.equal(['/record/seats']);
    expect(validate({ name: 'Ada', email: 'a@b.c', seats: 2, budget: 2 })).to.deep.equal([]);
    expect(validate({ name: 'Ada', email: 'a@b.c', budget: '2' }).map((e) => e.path)).to.deep.equal(['/record/budget']);
  });

  it('enforces types, enums and string-array items, listing every problem', () => {
    const errs = validate({ name: 7, email: 'a@b.c', active: 'yes', stage: 'lost', tags: ['a', 3] });
    expect(errs.map((e) => e.path)).to.have.members(['/record/name', '/record/active', '/record/stage', '/record/tags/1']);
    expect(errs.find((e) => e.path === '/record/stage')?.message).to.equal('must be one of "new", "won"');
  });

  it('enforces required unless relaxed', () => {
    expect(validate({ name: 'Ada' })).to.deep.equal([{ path: '/record/email', message: 'is required' }]);
    expect(validate({}).map((e) => e.path)).to.have.members(['/record/name', '/record/email']);
    expect(validate({ name: 'Ada' }, { relaxRequired: true })).to.deep.equal([]);
    expect(validate({}, { relaxRequired: true })).to.deep.equal([]);
    // relaxed still checks everything else
    expect(validate({ seats: 1.5, x: 1 }, { relaxRequired: true }).map((e) => e.path)).to.have.members(['/record/seats', '/record/x']);
  });

  it('rejects a record that is not an object', () => {
    for (const record of [null, [], 'ada', 1]) expect(validate(record).map((e) => e.path), JSON.stringify(record)).to.deep.equal(['/record']);
  });

  it('roots paths where the caller says', () => {
    const err = caught(() => validateRecord(version(LEAD), { name: 'Ada' }, '/memories/0/record'));
    expect(err.errors).to.deep.equal([{ path: '/memories/0/record/email', message: 'is required' }]);
    expect(err.detail).to.match(/schema "lead" version 3/);
  });

  it('compiles a validator once per schema and option', () => {
    const copy = JSON.parse(JSON.stringify(LEAD)) as RecordJsonSchema;
    expect(recordValidator(LEAD)).to.equal(recordValidator(copy));
    expect(recordValidator(LEAD, { relaxRequired: true })).to.not.equal(recordValidator(LEAD));
    expect(recordValidator(LEAD, { relaxRequired: true })).to.equal(recordValidator(copy, { relaxRequired: true }));
  });

  it('refuses to compile a schema outside the subset', () => {
    expect(caught(() => recordValidator({ type: 'object', properties: { a: { type: 'object' } } } as unknown as RecordJsonSchema)).code).to.equal('invalid_schema');
  });
});

describe('renderEmbedText', () => {
  it('fills placeholders, joins arrays and drops lines whose placeholders are all empty', () => {
    const v = version(LEAD, '  Lead {{name}} <{{email}}>\nStage: {{stage}}\nTags: {{ tags }}\nSeats: {{seats}}, active: {{active}}\n---\n');
    expect(renderEmbedText(v, { name: 'Ada', email: 'ada@example.com', tags: ['ml', 'ops'], seats: 0, active: false })).to.equal(
      'Lead Ada <ada@example.com>\nTags: ml, ops\nSeats: 0, active: false\n---',
    );
  });

  it('keeps a line when at least one of its placeholders has a value, leaving the others empty', () => {
    const v = version(LEAD, 'Lead {{name}} <{{email}}>\nBudget: {{budget}}');
    expect(renderEmbedText(v, { email: 'x@y.z' })).to.equal('Lead  <x@y.z>');
    expect(renderEmbedText(v, { tags: [] })).to.equal('');
  });

  it('renders the default template as field: value lines', () => {
    expect(renderEmbedText(version(LEAD), { name: 'Ada', stage: 'new', tags: [] })).to.equal('name: Ada\nstage: new');
  });

  it('renders the presets from plausible records', () => {
    const lead = SCHEMA_PRESETS.find((p) => p.name === 'lead-profile') as SchemaPreset;
    const text = renderEmbedText(lead, { name: 'Ada Lovelace', company: 'Analytical Engines', role: 'CTO', interests: ['api', 'pricing'] });
    expect(text).to.equal('Lead: Ada Lovelace\nRole: CTO\nCompany: Analytical Engines\nInterests: api, pricing');
  });
});
