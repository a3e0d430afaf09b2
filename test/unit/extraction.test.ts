import { expect } from 'chai';
import { extractionPrompt, parseModelJson, relaxedSchema, sanitizeExtraction, sanitizeFacts } from '../../providers/extraction.js';
import { MAX_FACT_LENGTH, type ExtractionInput, type ExtractionSchema } from '../../providers/extractor.js';
import { modelName, Providers } from '../../providers/registry.js';
import { extractLocally, LocalExtractor } from '../../providers/local/local.extractor.js';
import { findDates, findNumbers, findPhones, findUrls } from '../../providers/local/text-values.js';
import { SCHEMA_PRESETS } from '../../core/schema-presets.js';
import { recordValidator } from '../../core/schemas.js';
import { loadConfig } from '../../lib/config.js';
import { AppError } from '../../lib/errors.js';
import { createLogger } from '../../lib/logger.js';

const log = createLogger('silent');

// The five starter schemas (the presets of GET /v1/schema-presets), reduced to the fields
// every extraction model must handle, with the presets' descriptions.
const LINK: ExtractionSchema = {
  type: 'object',
  properties: {
    url: { type: 'string', description: 'The full web address exactly as written, starting with http:// or https:// (e.g. https://example.com/guide).' },
    title: { type: 'string', description: 'The title of the page, or a short name for what the link points to.' },
    note: { type: 'string', description: 'Why the link was saved or what to do with it, in the words used.' },
    tags: { type: 'array', items: { type: 'string' }, description: 'Short topic labels for the link, e.g. "pricing", "docs", "competitor".' },
  },
  required: ['url'],
  additionalProperties: false,
};

const OBSERVATION: ExtractionSchema = {
  type: 'object',
  properties: {
    subject: { type: 'string', description: 'Who or what the observation is about: a person, a customer, a product or a system, by name.' },
    observation: { type: 'string', description: 'What was observed, as one plain sentence.' },
    confidence: { type: 'string', enum: ['low', 'medium', 'high'], description: 'How certain it is: high when stated directly by the subject, medium when reported, low when guessed.' },
  },
  required: ['subject', 'observation'],
  additionalProperties: false,
};

const ACTION_ITEM: ExtractionSchema = {
  type: 'object',
  properties: {
    task: { type: 'string', description: 'What has to be done, as a short imperative sentence (e.g. "Send the revised quote").' },
    owner: { type: 'string', description: 'The name of the person responsible for the task.' },
    due_date: { type: 'string', description: 'When the task is due, as an ISO 8601 date (YYYY-MM-DD) when a date is stated.' },
    status: { type: 'string', enum: ['open', 'in_progress', 'done'], description: 'Where the task stands.' },
    priority: { type: 'string', enum: ['low', 'medium', 'high'], description: 'How urgent the task is, when stated.' },
  },
  required: ['task'],
  additionalProperties: false,
};

const DECISION: ExtractionSchema = {
  type: 'object',
  properties: {
    decision: { type: 'string', description: 'What was decided, as one sentence (e.g. "We will use PostgreSQL for billing").' },
    rationale: { type: 'string', description: 'Why it was decided: the reasons, constraints or evidence given.' },
    decided_by: { type: 'string', description: 'The person or group who made or approved the decision.' },
    date: { type: 'string', description: 'When it was decided, as an ISO 8601 date (YYYY-MM-DD).' },
  },
  required: ['decision'],
  additionalProperties: false,
};

const LEAD_PROFILE: ExtractionSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'The lead\'s full name (e.g. "Ada Lovelace").' },
    email: { type: 'string', description: 'Email address, e.g. ada@example.com.' },
    company: { type: 'string', description: 'The company or organisation the lead works for.' },
    role: { type: 'string', description: 'Job title or role at the company (e.g. "CTO", "Head of Sales").' },
    phone: { type: 'string', description: 'Phone number as written, with country code when given.' },
    stage: { type: 'string', enum: ['new', 'contacted', 'qualified', 'won', 'lost'], description: 'Sales pipeline stage.' },
    budget: { type: 'number', description: 'Stated budget as a plain number in the currency mentioned (e.g. 50000).' },
  },
  required: ['name'],
  additionalProperties: false,
};

const fromText = (schema: ExtractionSchema, text: string): Record<string, unknown> => extractLocally(schema, { text });

/** Asserts what each text yields, exactly: a missing key in `expected` must be absent. */
function expectExtractions(schema: ExtractionSchema, cases: Array<[string, Record<string, unknown>]>): void {
  for (const [text, expected] of cases) {
    expect(fromText(schema, text), text).to.deep.equal(expected);
  }
}

describe('local extractor: link', () => {
  it('finds the URL, a quoted or labelled title, a note and tag lists', () => {
    expectExtractions(LINK, [
      [
        'Check out https://koajs.com/guide titled "Koa guide" — tags: koa, node and middleware.',
        { url: 'https://koajs.com/guide', title: 'Koa guide', tags: ['koa', 'node', 'middleware'] },
      ],
      [
        'Saving https://example.com/post?id=3. Note: great intro to vector search. #search #ml',
        { url: 'https://example.com/post?id=3', note: 'great intro to vector search', tags: ['search', 'ml'] },
      ],
      [
        'The title is "Designing Data-Intensive Applications" and the url is https://dataintensive.net. Notes: must read.',
        { url: 'https://dataintensive.net', title: 'Designing Data-Intensive Applications', note: 'must read' },
      ],
      ['Link: www.example.org, title: Example Domain', { url: 'www.example.org', title: 'Example Domain' }],
      [
        'Bookmark this: https://developer.mozilla.org/en-US/docs/Web/HTTP (MDN), tagged with http, web.',
        { url: 'https://developer.mozilla.org/en-US/docs/Web/HTTP', tags: ['http', 'web'] },
      ],
      ['tags are rust and wasm', { tags: ['rust', 'wasm'] }],
    ]);
  });

  it('finds nothing where no link, title, note or tag is stated', () => {
    expectExtractions(LINK, [
      ['I read an article about Koa yesterday.', {}],
      ['No link today, sorry.', {}],
      ['Title: TBD. Tags: none.', {}],
      ['', {}],
    ]);
  });
});

describe('local extractor: observation', () => {
  it('finds what was observed, about whom, and a stated confidence', () => {
    expectExtractions(OBSERVATION, [
      [
        'I noticed that the checkout page is slow on mobile, with high confidence.',
        { subject: 'checkout page', observation: 'the checkout page is slow on mobile', confidence: 'high' },
      ],
      [
        'Observation: customers abandon carts when shipping costs appear late. Subject: checkout funnel. Confidence: medium.',
        { subject: 'checkout funnel', observation: 'customers abandon carts when shipping costs appear late', confidence: 'medium' },
      ],
      [
        'About the onboarding flow: new users skip the tutorial, confidence low.',
        { subject: 'onboarding flow', observation: 'new users skip the tutorial', confidence: 'low' },
      ],
      ['Observation about Acme: they renew every January.', { subject: 'Acme', observation: 'they renew every January' }],
      ['Dana prefers invoices by email.', { subject: 'Dana', observation: 'Dana prefers invoices by email' }],
      [
        'It seems the nightly backup job fails on Sundays (low confidence).',
        { subject: 'nightly backup job', observation: 'the nightly backup job fails on Sundays', confidence: 'low' },
      ],
    ]);
  });

  it('does not read a confidence from degree words about something else, nor invent an observation', () => {
    expectExtractions(OBSERVATION, [
      ["What's the weather like?", {}],
      ['The risk is high.', {}],
      ['I am not confident at all.', {}],
      ['Confidence: very sure.', {}],
      ['Confidence is not high.', {}],
    ]);
  });
});

describe('local extractor: action item', () => {
  it('finds the task, its owner, an explicit due date, status and priority', () => {
    expectExtractions(ACTION_ITEM, [
      [
        "Alice will send the Q3 report to finance by March 3, 2026. It's high priority.",
        { task: 'send the Q3 report to finance', owner: 'Alice', due_date: '2026-03-03', priority: 'high' },
      ],
      [
        'Task: update the onboarding docs. Owner: Bob. Due date: 2026-04-15. Status: in progress. Priority: low.',
        { task: 'update the onboarding docs', owner: 'Bob', due_date: '2026-04-15', status: 'in_progress', priority: 'low' },
      ],
      [
        'TODO: renew the SSL certificate, assigned to @carol, due 2026-05-01, status open',
        { task: 'renew the SSL certificate', owner: 'carol', due_date: '2026-05-01', status: 'open' },
      ],
      [
        'Need to book the venue for the offsite before 2026-06-01 — medium priority.',
        { task: 'book the venue for the offsite', due_date: '2026-06-01', priority: 'medium' },
      ],
      ['Bob needs to update the pricing page; status: open; priority: high', { task: 'update the pricing page', owner: 'Bob', status: 'open', priority: 'high' }],
      ['The migration task is done.', { status: 'done' }],
    ]);
  });

  it('skips relative dates, hedges, negated states and words that are not enum members', () => {
    expectExtractions(ACTION_ITEM, [
      ['Remember to call the bank tomorrow.', { task: 'call the bank' }],
      ['Please review PR #42 by Friday.', { task: 'review PR #42' }],
      ['We should probably talk sometime.', {}],
      ['The shop is open until 9pm.', {}],
      ['Status is not done yet.', {}],
      ["The report isn't done.", {}],
      ['Priority: urgent', {}],
      ['Status: finished', {}],
      ['Owner: unknown', {}],
      ['The report covers low-income regions.', {}],
    ]);
  });
});

describe('local extractor: decision', () => {
  it('finds the decision, its reason, who made it and when', () => {
    expectExtractions(DECISION, [
      [
        'On March 3, 2026 Maria decided to migrate the search service to Postgres because the license costs were too high.',
        { decision: 'migrate the search service to Postgres', rationale: 'the license costs were too high', decided_by: 'Maria', date: '2026-03-03' },
      ],
      [
        'Decision: adopt trunk-based development. Rationale: fewer merge conflicts. Decided by: the platform team. Date: 2026-02-10.',
        { decision: 'adopt trunk-based development', rationale: 'fewer merge conflicts', decided_by: 'the platform team', date: '2026-02-10' },
      ],
      ['We agreed to freeze the API until June.', { decision: 'freeze the API until June' }],
      [
        'The team decided on Kafka for event streaming since it handles replay.',
        { decision: 'Kafka for event streaming', rationale: 'it handles replay', decided_by: 'The team' },
      ],
      ['Going with option B, decided by Sam on 2026-01-20.', { decision: 'option B', decided_by: 'Sam', date: '2026-01-20' }],
      ['The decision was to postpone the launch due to open security issues.', { decision: 'postpone the launch', rationale: 'open security issues' }],
    ]);
  });

  it('finds nothing in talk about deciding later, and "since" a year is no reason', () => {
    expectExtractions(DECISION, [
      ["Let's discuss the database options next week.", {}],
      ["We haven't decided yet.", {}],
      ['Since 2020 we run on AWS.', {}],
    ]);
  });
});

describe('local extractor: lead profile', () => {
  it('finds name, contact details, company, role, stage and budget', () => {
    expectExtractions(LEAD_PROFILE, [
      [
        "Hi, I'm Jane Doe, a product manager at Acme Corp. You can reach me at jane.doe@acme.com or +1 (555) 010-2030. Our budget is $12,500.",
        { name: 'Jane Doe', email: 'jane.doe@acme.com', company: 'Acme Corp', role: 'product manager', phone: '+1 (555) 010-2030', budget: 12500 },
      ],
      [
        'New lead: Tom Baker from Globex, CTO. Email tom@globex.io. Stage: qualified. Budget around 50k.',
        { name: 'Tom Baker', email: 'tom@globex.io', company: 'Globex', role: 'CTO', stage: 'qualified', budget: 50000 },
      ],
      [
        "This is Priya Patel, Head of Growth at Initech; call me on 020 7946 0958. We're still evaluating, no budget yet.",
        { name: 'Priya Patel', company: 'Initech', role: 'Head of Growth', phone: '020 7946 0958' },
      ],
      [
        'Contact: Maria Garcia <maria@garcia.es>, works at Telefónica as a network architect, budget €80,000, stage contacted.',
        { name: 'Maria Garcia', email: 'maria@garcia.es', company: 'Telefónica', role: 'network architect', stage: 'contacted', budget: 80000 },
      ],
      ['Ada Lovelace, CTO at Analytical Engines, ada@example.com', { name: 'Ada Lovelace', email: 'ada@example.com', company: 'Analytical Engines', role: 'CTO' }],
      ["I'm the CTO of Initech. Email me at bill@initech.com.", { email: 'bill@initech.com', company: 'Initech', role: 'CTO' }],
      ['The lead is qualified and their budget is 2.5 million.', { stage: 'qualified', budget: 2500000 }],
      ['Our company is Blue Bottle Coffee and my title is Head of Ops.', { company: 'Blue Bottle Coffee', role: 'Head of Ops' }],
      ['my name is jane and my email is jane@x.io', { name: 'jane', email: 'jane@x.io' }],
    ]);
  });

  it('invents no names, numbers or stages', () => {
    expectExtractions(LEAD_PROFILE, [
      ['The meeting went fine.', {}],
      ['Stage is unknown; budget TBD.', {}],
      ['We met 3 people from the team.', {}],
      ['The deal was not won.', {}],
      ['I work for a small startup.', {}],
      ["I'm happy to help, call me maybe.", {}],
      ['The lead is hot.', {}],
      ['Call me at 415-555-0132 on March 3, 2026.', { phone: '415-555-0132' }],
    ]);
  });
});

describe('local extractor: any schema', () => {
  const schema: ExtractionSchema = {
    type: 'object',
    properties: {
      seats: { type: 'integer' },
      is_vip: { type: 'boolean' },
      newsletter: { type: 'boolean' },
      favourite_color: { type: 'string' },
      start_date: { type: 'string' },
      end_date: { type: 'string' },
      languages: { type: 'array', items: { type: 'string' } },
      dob: { type: 'string', description: 'Date of birth' },
      ref: { type: 'string', description: 'Booking reference code' },
    },
  };

  it('reads `field: value`, `field is value` and `field = value` by the words of any property name', () => {
    expectExtractions(schema, [
      ['Favourite color is teal. Start date 2026-01-05, end date: 2026-02-05.', { favourite_color: 'teal', start_date: '2026-01-05', end_date: '2026-02-05' }],
      ['favourite_color = teal; seats = 12', { favourite_color: 'teal', seats: 12 }],
      ['Languages: English, French and German.', { languages: ['English', 'French', 'German'] }],
      ['dob: 1990-07-14', { dob: '1990-07-14' }],
      ['Reference: AB-1234', { ref: 'AB-1234' }],
    ]);
  });

  it('reads integers and booleans only where they are stated, negations included', () => {
    expectExtractions(schema, [
      ['We need 25 seats. She is a VIP and is not subscribed to the newsletter.', { seats: 25, is_vip: true }],
      ['Not a VIP.', { is_vip: false }],
      ['VIP: yes, newsletter: no, seats = twelve', { is_vip: true, newsletter: false, seats: 12 }],
      ['seats: 2.5', {}],
      ['seats: a few', {}],
    ]);
  });

  it('leaves two date fields empty when neither date is labelled', () => {
    expectExtractions(schema, [['The contract runs from 2026-01-05 to 2026-02-05.', {}]]);
  });

  it('is deterministic and answers through the Extractor interface', async () => {
    const text = "Hi, I'm Jane Doe, a product manager at Acme Corp. Our budget is $12,500.";
    const extractor = new LocalExtractor();
    expect(extractor.model).to.equal('local');
    const first = await extractor.extract(LEAD_PROFILE, { text });
    expect(first).to.deep.equal(await extractor.extract(LEAD_PROFILE, { text }));
    expect(first).to.deep.equal(fromText(LEAD_PROFILE, text));
  });
});

describe('local extractor: conversations', () => {
  const chat = (...turns: Array<[string, string]>): ExtractionInput => ({ messages: turns.map(([role, content]) => ({ role, content })) });

  it('takes answers to the assistant\'s questions, the latest statement winning', () => {
    const input = chat(
      ['assistant', 'Hi! What is your email?'],
      ['user', 'jane@acme.com'],
      ['assistant', 'Thanks. And your budget?'],
      ['user', 'About $5,000'],
      ['assistant', 'Which company are you with?'],
      ['user', "It's Wayne Enterprises."],
      ['user', 'Actually my email is jane.doe@acme.com'],
    );
    expect(extractLocally(LEAD_PROFILE, input)).to.deep.equal({ email: 'jane.doe@acme.com', budget: 5000, company: 'Wayne Enterprises' });
  });

  it('counts what the assistant says only when the user confirms it', () => {
    const confirmed = chat(['assistant', 'Just to confirm: your email is kim@corp.io and your budget is $8,000?'], ['user', "Yes, that's right."]);
    expect(extractLocally(LEAD_PROFILE, confirmed)).to.deep.equal({ email: 'kim@corp.io', budget: 8000 });
    const unconfirmed = chat(['assistant', 'Your budget is $10,000, I guess?'], ['user', 'Not sure.']);
    expect(extractLocally(LEAD_PROFILE, unconfirmed)).to.deep.equal({});
    const assistantOnly = chat(['user', "I'm Lee Chen from Umbrella."], ['assistant', 'Nice to meet you! I see your budget is 1000 and the stage is won.']);
    expect(extractLocally(LEAD_PROFILE, assistantOnly)).to.deep.equal({ name: 'Lee Chen', company: 'Umbrella' });
  });

  it('ignores system and tool messages, and maps a bare enum answer', () => {
    const input = chat(['system', 'The user name is Root.'], ['tool', '{"stage":"won"}'], ['assistant', 'What stage is the lead in?'], ['user', 'qualified']);
    expect(extractLocally(LEAD_PROFILE, input)).to.deep.equal({ stage: 'qualified' });
    expect(extractLocally(LEAD_PROFILE, chat())).to.deep.equal({});
  });
});

describe('local extractor: the starter presets as served', () => {
  const sentences: Record<string, string> = {
    link: 'Saving https://example.com/pricing — title: Competitor pricing. Tags: pricing, competitor.',
    observation: 'Feedback from the sales call: Dana prefers invoices by email. This is a preference, high confidence. Source: sales call.',
    'action-item': 'From the weekly sync: Raj will draft the Q2 roadmap by 2026-04-01. Status: cancelled. Context: weekly sync.',
    decision: 'We decided to use PostgreSQL for billing because we need transactions. Alternatives considered: MySQL and DynamoDB. Status: accepted.',
    'lead-profile':
      'Met Ada Lovelace, CTO at Analytical Engines, ada@example.com, at a conference. Source: conference. Interested in vector search and agents. Budget: $50,000.',
  };

  it('finds nothing in chatter, hedges and boilerplate, whatever the preset', () => {
    const chatter = [
      'Thanks for the call today, it was great to chat.',
      'The weather in Berlin is nice. I had 3 coffees.',
      'Can you send me the slides from the meeting?',
      'We are planning to expand into Europe next year, probably in Q3.',
      'Our team has 45 engineers and we use Kubernetes on AWS.',
      'I will be out of office from Monday to Wednesday.',
      'The price went up by 20% last month.',
      'Please find attached the invoice for March.',
      'I think the CEO of Acme is called Bob, not sure though.',
      'I think my email is bob@example.com, not sure.',
      'I have no idea what the budget is.',
      'The status of the project is unclear.',
      'We might decide to switch to Go at some point.',
      'I am from Spain and I love football.',
      'Maria will be happy about that.',
      'It was decided.',
      'Lol ok 👍',
    ];
    for (const preset of SCHEMA_PRESETS) {
      for (const text of chatter) expect(extractLocally(preset.json_schema, { text }), `${preset.name}: ${text}`).to.deep.equal({});
    }
  });

  it('extracts the required fields of every preset from a plain sentence, each value valid for the schema', () => {
    expect(SCHEMA_PRESETS.map((p) => p.name)).to.have.members(Object.keys(sentences));
    for (const preset of SCHEMA_PRESETS) {
      const values = extractLocally(preset.json_schema, { text: sentences[preset.name] as string });
      for (const field of preset.json_schema.required ?? []) expect(values, `${preset.name}.${field}`).to.have.property(field);
      const validate = recordValidator(preset.json_schema, { relaxRequired: true });
      expect(validate(values), `${preset.name}: ${JSON.stringify(validate.errors)}`).to.equal(true);
    }
    expect(extractLocally(SCHEMA_PRESETS.find((p) => p.name === 'lead-profile')?.json_schema as ExtractionSchema, { text: sentences['lead-profile'] as string })).to.deep.equal({
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      company: 'Analytical Engines',
      role: 'CTO',
      source: 'conference',
      budget: 50000,
      interests: ['vector search', 'agents'],
    });
  });
});

describe('value formats', () => {
  it('reads full dates as YYYY-MM-DD, keeps yearless ones as written, and never resolves relative ones', () => {
    const dates = (text: string): string[] => findDates(text).map((d) => d.value);
    expect(dates('2026-03-03, March 3, 2026, 3 March 2026, Tue, Mar 3rd 2026, the 3rd of March 2026')).to.deep.equal(Array(5).fill('2026-03-03'));
    expect(dates('2026/03/03 and 14/03/2026 and 03/14/2026')).to.deep.equal(['2026-03-03', '2026-03-14', '2026-03-14']);
    expect(dates('due March 3')).to.deep.equal(['March 3']);
    expect(dates('2026-03-03T10:30:00Z')).to.deep.equal(['2026-03-03T10:30:00Z']);
    expect(dates('tomorrow, next Friday, in two weeks, 03/04/2026, 2026-02-30, February 30, 2026, you may 3 times')).to.deep.equal([]);
  });

  it('reads amounts with currency, separators and multipliers, but not inside dates or phone numbers', () => {
    const numbers = (text: string): number[] => findNumbers(text, [...findDates(text), ...findPhones(text)]).map((n) => n.value);
    expect(numbers('$1,200 and 1,200.50 and 50k and $2.5m and 2.5 million and 12% and 5 kg and -3 and twelve')).to.deep.equal([1200, 1200.5, 50000, 2500000, 2500000, 12, 5, -3, 12]);
    expect(numbers('on 2026-03-03 call +1 (555) 010-2030')).to.deep.equal([]);
  });

  it('finds URLs without trailing punctuation and phone numbers that are not dates or amounts', () => {
    expect(findUrls('See (https://en.wikipedia.org/wiki/Koa_(disambiguation)). Or www.example.com.').map((u) => u.value)).to.deep.equal([
      'https://en.wikipedia.org/wiki/Koa_(disambiguation)',
      'www.example.com',
    ]);
    expect(findPhones('call 020 7946 0958 or +44 20 7946 0958, not 2026-03-03 or 1,200,000').map((p) => p.value)).to.deep.equal(['020 7946 0958', '+44 20 7946 0958']);
  });
});

describe('sanitising a model\'s answer', () => {
  const schema: ExtractionSchema = {
    type: 'object',
    properties: {
      name: { type: 'string' },
      seats: { type: 'integer' },
      budget: { type: 'number' },
      vip: { type: 'boolean' },
      stage: { type: 'string', enum: ['new', 'in_progress', 'won'] },
      tags: { type: 'array', items: { type: 'string' } },
    },
    required: ['name'],
  };

  it('keeps values of the right type and drops unknown keys, wrong types and placeholders', () => {
    expect(
      sanitizeExtraction(schema, { name: '  Jane  ', seats: 3, budget: 1200.5, vip: false, stage: 'won', tags: ['a', 'b'], extra: 'x' }),
    ).to.deep.equal({ name: 'Jane', seats: 3, budget: 1200.5, vip: false, stage: 'won', tags: ['a', 'b'] });
    expect(sanitizeExtraction(schema, { name: 42, seats: 2.5, budget: '$1,200', vip: 'yes', stage: 'lost', tags: 'a, b' })).to.deep.equal({});
    expect(sanitizeExtraction(schema, { name: 'unknown', seats: null, budget: Number.NaN, tags: [] })).to.deep.equal({});
    expect(sanitizeExtraction(schema, { name: 'N/A', stage: '' })).to.deep.equal({});
  });

  it('maps an enum value spelled differently onto its member, reads plain numeric strings, and cleans arrays', () => {
    expect(sanitizeExtraction(schema, { stage: 'In Progress', seats: '4', budget: '1200.50', vip: 'true', tags: ['a', 3, '', 'A', ' b '] })).to.deep.equal({
      stage: 'in_progress',
      seats: 4,
      budget: 1200.5,
      vip: true,
      tags: ['a', 'b'],
    });
  });

  it('takes nothing from an answer that is not an object', () => {
    for (const raw of [null, 'text', 42, ['name'], undefined, Object.create({ name: 'inherited' }) as object]) {
      expect(sanitizeExtraction(schema, raw)).to.deep.equal({});
    }
  });

  it('finds the JSON object in a fenced or chatty answer', () => {
    expect(parseModelJson('{"a":1}')).to.deep.equal({ a: 1 });
    expect(parseModelJson('```json\n{"a": 1}\n```')).to.deep.equal({ a: 1 });
    expect(parseModelJson('Here you go: {"a": {"b": 2}} Hope that helps!')).to.deep.equal({ a: { b: 2 } });
    for (const bad of ['', 'no json', '[1,2]', '{"a":', 'null']) expect(parseModelJson(bad), bad).to.equal(null);
  });

  it('asks remote models with required relaxed and the input as text or transcript', () => {
    const relaxed = relaxedSchema(schema);
    expect(relaxed).to.not.have.property('required');
    expect(relaxed).to.include({ type: 'object', additionalProperties: false });
    expect(Object.keys(relaxed.properties as object)).to.deep.equal(Object.keys(schema.properties));
    expect(schema.required).to.deep.equal(['name']);
    expect(extractionPrompt(schema, { text: 'I am Jane.' })).to.include('Text:\nI am Jane.');
    expect(extractionPrompt(schema, { messages: [{ role: 'assistant', content: 'Name?' }, { role: 'user', content: 'Jane' }] })).to.include(
      'Conversation:\nassistant: Name?\nuser: Jane',
    );
  });
});

/** The AppError `fn` throws (fails the test when it throws nothing or something else). */
function appErrorOf(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    return err as AppError;
  }
  return expect.fail('expected an AppError');
}

describe('facts for memory (infer)', () => {
  it('keeps the user\'s statements and drops questions, requests and pleasantries', async () => {
    const facts = await new LocalExtractor().facts([
      { role: 'user', content: 'Hi! I am allergic to peanuts. Can you suggest a snack? Please remember that I prefer salty food.\n- My sister lives in Lyon' },
      { role: 'assistant', content: 'Try salted almonds.' },
      { role: 'user', content: 'Thanks! Let\'s plan dinner. i am allergic to peanuts!' },
    ]);
    expect(facts).to.deep.equal(['I am allergic to peanuts', 'I prefer salty food', 'My sister lives in Lyon']);
    expect(await new LocalExtractor().facts([{ role: 'user', content: 'Hello there. What time is it?' }])).to.deep.equal([]);
  });

  it('cleans a model\'s facts: strings only, no placeholders or repeats, long ones cut at a word', () => {
    expect(sanitizeFacts({ facts: [' Likes tea ', 'likes  tea', 'n/a', null, 'Works at Acme'] })).to.deep.equal(['Likes tea', 'Works at Acme']);
    expect(sanitizeFacts({ facts: 'Likes tea' })).to.deep.equal([]);
    expect(sanitizeFacts(['Likes tea'])).to.deep.equal([]);
    const long = sanitizeFacts({ facts: [`Likes ${'very '.repeat(200)}strong tea`] })[0] as string;
    expect(long.length).to.be.at.most(MAX_FACT_LENGTH);
    expect(long.endsWith('very')).to.equal(true);
  });
});

describe('extractor registry', () => {
  const configured = loadConfig({ COHERE_API_KEY: 'test-key', OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' });
  const bare = loadConfig({});
  const normalizeExtractModelName = (name: string): string => modelName('extract', name);

  it('reads model names as local, cohere/<model> or openai/<model>', () => {
    expect(normalizeExtractModelName(' Local ')).to.equal('local');
    expect(normalizeExtractModelName('Cohere/command-a-03-2025')).to.equal('cohere/command-a-03-2025');
    expect(normalizeExtractModelName('openai/meta-llama/Llama-3.1-8B-Instruct')).to.equal('openai/meta-llama/Llama-3.1-8B-Instruct');
    for (const name of ['gpt-4o', 'anthropic/claude', 'cohere', 'openai/', 'local/rules', 'cohere/command a', '']) {
      const error = appErrorOf(() => normalizeExtractModelName(name));
      expect([error.status, error.code], name).to.deep.equal([400, 'unknown_model']);
    }
  });

  it('says which variable to set when a provider is not configured', () => {
    const extractors = new Providers(bare, log).extractors;
    expect(extractors.validate('local')).to.equal('local');
    const cohere = appErrorOf(() => extractors.get('cohere/command-a-03-2025'));
    expect([cohere.status, cohere.code]).to.deep.equal([400, 'model_unavailable']);
    expect(cohere.detail).to.include('COHERE_API_KEY');
    const openai = appErrorOf(() => extractors.validate('openai/gpt-4o-mini'));
    expect([openai.status, openai.code]).to.deep.equal([400, 'model_unavailable']);
    expect(openai.detail).to.include('OPENAI_BASE_URL');
  });

  it('hands out one extractor per model, whatever the spelling', () => {
    const extractors = new Providers(configured, log).extractors;
    expect(extractors.get()).to.equal(extractors.get('LOCAL'));
    expect(extractors.get().model).to.equal('local');
    expect(extractors.get('Cohere/command-a-03-2025')).to.equal(extractors.get('cohere/command-a-03-2025'));
    expect(extractors.get('cohere/command-a-03-2025').model).to.equal('cohere/command-a-03-2025');
    expect(extractors.get('openai/gpt-4o-mini').model).to.equal('openai/gpt-4o-mini');
  });
});
