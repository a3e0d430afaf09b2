import type { RecordJsonSchema } from './schemas.js';

/** A built-in starter schema. Sending one unchanged to `POST /v1/schemas` adopts it. */
export interface SchemaPreset {
  name: string;
  description: string;
  json_schema: RecordJsonSchema;
  embed_template: string;
}

// Descriptions are written for the extraction model as much as for people: each says what the
// value is, how it is usually phrased, and the expected format, so values can be lifted from
// plain sentences ("Ada Lovelace, CTO at Analytical Engines, ada@example.com").

const link: SchemaPreset = {
  name: 'link',
  description: 'A web link worth remembering: the address, what it is, and why it matters.',
  json_schema: {
    type: 'object',
    properties: {
      url: {
        type: 'string',
        description: 'The full web address exactly as written, starting with http:// or https:// (e.g. https://example.com/guide).',
      },
      title: { type: 'string', description: 'The title of the page, or a short name for what the link points to.' },
      note: { type: 'string', description: 'Why the link was saved or what to do with it, in the words used.' },
      tags: {
        type: 'array',
        items: { type: 'string' },
        description: 'Short topic labels for the link, e.g. "pricing", "docs", "competitor".',
      },
    },
    required: ['url'],
    additionalProperties: false,
  },
  embed_template: 'Link: {{title}}\nURL: {{url}}\nNote: {{note}}\nTags: {{tags}}',
};

const observation: SchemaPreset = {
  name: 'observation',
  description: 'Something noticed about a person, customer or thing: a preference, a fact, a behaviour or feedback.',
  json_schema: {
    type: 'object',
    properties: {
      subject: {
        type: 'string',
        description: 'Who or what the observation is about: a person, a customer, a product or a system, by name.',
      },
      observation: { type: 'string', description: 'What was observed, as one plain sentence.' },
      category: {
        type: 'string',
        enum: ['preference', 'fact', 'behavior', 'feedback', 'issue', 'other'],
        description: 'The kind of observation: a preference (likes, dislikes), a fact, a behavior, feedback given, or an issue.',
      },
      confidence: {
        type: 'string',
        enum: ['low', 'medium', 'high'],
        description: 'How certain it is: high when stated directly by the subject, medium when reported, low when guessed.',
      },
      source: { type: 'string', description: 'Where it came from, e.g. "support chat", "sales call", "email".' },
    },
    required: ['subject', 'observation'],
    additionalProperties: false,
  },
  embed_template: 'Observation about {{subject}}: {{observation}}\nCategory: {{category}}\nConfidence: {{confidence}}\nSource: {{source}}',
};

const actionItem: SchemaPreset = {
  name: 'action-item',
  description: 'A task someone has to do: what, who, by when, and where it stands.',
  json_schema: {
    type: 'object',
    properties: {
      task: { type: 'string', description: 'What has to be done, as a short imperative sentence (e.g. "Send the revised quote").' },
      owner: { type: 'string', description: 'The name of the person responsible for the task.' },
      due_date: {
        type: 'string',
        description: 'When the task is due, as an ISO 8601 date (YYYY-MM-DD) when a date is stated.',
      },
      status: {
        type: 'string',
        enum: ['open', 'in_progress', 'done', 'cancelled'],
        description: 'Where the task stands: open (not started), in_progress, done or cancelled.',
      },
      priority: { type: 'string', enum: ['low', 'medium', 'high'], description: 'How urgent the task is, when stated.' },
      context: { type: 'string', description: 'Where the task came up: the meeting, thread or project.' },
    },
    required: ['task'],
    additionalProperties: false,
  },
  embed_template: 'Task: {{task}}\nOwner: {{owner}}\nDue: {{due_date}}\nStatus: {{status}}\nPriority: {{priority}}\nContext: {{context}}',
};

const decision: SchemaPreset = {
  name: 'decision',
  description: 'A decision that was made, with its reasons, so it is not re-litigated or forgotten.',
  json_schema: {
    type: 'object',
    properties: {
      decision: { type: 'string', description: 'What was decided, as one sentence (e.g. "We will use PostgreSQL for billing").' },
      rationale: { type: 'string', description: 'Why it was decided: the reasons, constraints or evidence given.' },
      decided_by: { type: 'string', description: 'The person or group who made or approved the decision.' },
      date: { type: 'string', description: 'When it was decided, as an ISO 8601 date (YYYY-MM-DD).' },
      alternatives: {
        type: 'array',
        items: { type: 'string' },
        description: 'Options that were considered and not chosen.',
      },
      status: {
        type: 'string',
        enum: ['proposed', 'accepted', 'superseded', 'reversed'],
        description: 'Whether the decision is only proposed, accepted, superseded by a later one, or reversed.',
      },
    },
    required: ['decision'],
    additionalProperties: false,
  },
  embed_template:
    'Decision: {{decision}}\nRationale: {{rationale}}\nDecided by: {{decided_by}}\nDate: {{date}}\nAlternatives considered: {{alternatives}}\nStatus: {{status}}',
};

const leadProfile: SchemaPreset = {
  name: 'lead-profile',
  description: 'A sales lead: who they are, how to reach them, their company and where they are in the pipeline.',
  json_schema: {
    type: 'object',
    properties: {
      name: { type: 'string', description: "The lead's full name (e.g. \"Ada Lovelace\")." },
      email: { type: 'string', description: 'Email address, e.g. ada@example.com.' },
      phone: { type: 'string', description: 'Phone number as written, with country code when given.' },
      company: { type: 'string', description: 'The company or organisation the lead works for.' },
      role: { type: 'string', description: 'Job title or role at the company (e.g. "CTO", "Head of Sales").' },
      stage: {
        type: 'string',
        enum: ['new', 'contacted', 'qualified', 'proposal', 'negotiation', 'won', 'lost'],
        description: 'Sales pipeline stage: new, contacted, qualified, proposal, negotiation, won or lost.',
      },
      source: { type: 'string', description: 'How the lead was found, e.g. "referral", "conference", "website", "outbound".' },
      budget: { type: 'number', description: 'Stated budget as a plain number in the currency mentioned (e.g. 50000).' },
      interests: {
        type: 'array',
        items: { type: 'string' },
        description: 'Products, features or topics the lead asked about.',
      },
      notes: { type: 'string', description: 'Anything else worth remembering about the lead.' },
    },
    required: ['name'],
    additionalProperties: false,
  },
  embed_template:
    'Lead: {{name}}\nRole: {{role}}\nCompany: {{company}}\nEmail: {{email}}\nPhone: {{phone}}\nStage: {{stage}}\nSource: {{source}}\nBudget: {{budget}}\nInterests: {{interests}}\nNotes: {{notes}}',
};

/** The built-in starters, in the order `GET /v1/schema-presets` lists them. */
export const SCHEMA_PRESETS: readonly SchemaPreset[] = Object.freeze([link, observation, actionItem, decision, leadProfile]);
