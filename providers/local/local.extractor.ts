import { isPlaceholder, sanitizeExtraction, sanitizeFacts } from '../extraction.js';
import type { Decision, ExtractionInput, ExtractionMessage, ExtractionProperty, ExtractionSchema, Extractor, FactCandidates } from '../extractor.js';
import { decideByRules } from './decision-rules.js';
import {
  findDates,
  findEmails,
  findHashtags,
  findNumbers,
  findPhones,
  findUrls,
  leadingCompanyName,
  leadingPersonName,
  PERSON_RUN,
  splitList,
  stripQuotes,
  type Found,
} from './text-values.js';

type Kind = 'string' | 'enum' | 'number' | 'integer' | 'boolean' | 'array';
type Format = 'email' | 'url' | 'phone' | 'date';
/** What a string field holds, guessed from its name (or description); it decides which cues apply. */
type Role =
  | 'person' // the speaker's or a contact's own name
  | 'assignee' // who does something (owner, assignee)
  | 'agent' // who did the <verb> of a `<verb>_by` field
  | 'company'
  | 'job'
  | 'task'
  | 'decision'
  | 'rationale'
  | 'observation'
  | 'subject'
  | 'title'
  | 'tags';

interface Field {
  name: string;
  kind: Kind;
  format: Format | null;
  role: Role | null;
  /** `decided` for `decided_by`. */
  verb: string | null;
  /** Label phrases: the name's words, their singular/plural, and the role's usual words. */
  keys: string[];
  /** Content words of the description, accepted only as `word: value` labels. */
  descKeys: string[];
  members: readonly string[];
}

// ---------------------------------------------------------------------------------------------
// Field plans: what each property is called in prose and what kind of value it takes.

const ROLE_WORDS: ReadonlyArray<[Role, RegExp]> = [
  ['company', /^(?:company|organization|organisation|org|employer|business|firm|workplace|account)$/],
  ['assignee', /^(?:owner|assignee|assigned|responsible|who)$/],
  ['job', /^(?:role|position|occupation|job|designation)$/],
  ['task', /^(?:task|todo|action|chore)$/],
  ['decision', /^(?:decision|resolution)$/],
  ['rationale', /^(?:rationale|reason|reasoning|why|justification)$/],
  ['observation', /^(?:observation|finding|insight|observed)$/],
  ['subject', /^(?:subject|topic|about|regarding|entity)$/],
  ['title', /^(?:title|headline|heading)$/],
];

const ROLE_ALIASES: Readonly<Partial<Record<Role | Format, string[]>>> = {
  email: ['email', 'e-mail', 'email address', 'mail'],
  url: ['url', 'link', 'website', 'web site', 'site', 'homepage'],
  phone: ['phone', 'phone number', 'mobile', 'cell', 'telephone', 'tel'],
  person: ['name', 'full name'],
  company: ['company', 'employer', 'organization', 'organisation', 'company name'],
  job: ['role', 'job title', 'title', 'position', 'job'],
  assignee: ['owner', 'assignee', 'assigned to', 'responsible'],
  task: ['task', 'todo', 'to-do', 'to do', 'action item', 'action'],
  decision: ['decision'],
  rationale: ['rationale', 'reason', 'reasoning', 'why', 'justification'],
  observation: ['observation', 'finding', 'insight'],
  subject: ['subject', 'topic', 're'],
  title: ['title', 'headline'],
  tags: ['tags', 'tag', 'labels', 'keywords', 'topics'],
};

/** Keys too common in prose to be read as labels unless followed by `:` or `=`. */
const STRONG_ONLY = new Set(['re', 'why', 'action', 'site', 'cell', 'tel', 'mail', 'job', 'to do', 'responsible', 'topics', 'position']);

const STOPWORDS = new Set(
  (
    'the a an of to in on at by for from with and or but not no is are was were be been being this that these those it its ' +
    'which what when where who whom whose why how as if than then there their they them he she his her we our you your i my me ' +
    'any all each every some such other another one two can could should would will shall may might must do does did done has have had ' +
    'value values field fields property record records text string number item items list optional required e.g eg etc ' +
    'about into over under more most less least very only just also own same so up out use used using'
  ).split(' '),
);

const wordsOf = (name: string): string[] => name.toLowerCase().split(/[_\s-]+/).filter((w) => w !== '');

function pluralVariants(phrase: string): string[] {
  const words = phrase.split(' ');
  const last = words.at(-1) as string;
  const variants: string[] = [];
  if (/ies$/.test(last)) variants.push(`${last.slice(0, -3)}y`);
  else if (/ses$|xes$|ches$|shes$/.test(last)) variants.push(last.slice(0, -2));
  else if (/s$/.test(last) && !/ss$/.test(last) && last.length > 3) variants.push(last.slice(0, -1));
  else if (/y$/.test(last) && !/[aeiou]y$/.test(last)) variants.push(`${last.slice(0, -1)}ies`);
  else if (/(?:s|x|ch|sh)$/.test(last)) variants.push(`${last}es`);
  else variants.push(`${last}s`);
  return variants.map((v) => [...words.slice(0, -1), v].join(' '));
}

function kindOf(property: ExtractionProperty): Kind {
  if (property.type === 'string') return property.enum !== undefined ? 'enum' : 'string';
  return property.type;
}

function formatOf(words: string[], name: string, description: string): Format | null {
  const has = (re: RegExp): boolean => words.some((w) => re.test(w));
  if (has(/^e?-?mail$/)) return 'email';
  if (has(/^(?:url|uri|link|website|homepage|site|href|webpage|permalink)$/)) return 'url';
  if (has(/^(?:phone|mobile|tel|telephone|cell|fax|whatsapp)$/)) return 'phone';
  if (has(/^(?:date|deadline|due|dob|birthday|day|when)$/) || /_(?:at|on)$/.test(name)) return 'date';
  // a description names the form only in its first words ("Email address, e.g. …"), not in
  // examples further on ("where it came from, e.g. email")
  const head = description.split(/[,.;:(]/)[0]?.split(/\s+/).slice(0, 5).join(' ') ?? '';
  if (/\be-?mail\b/.test(head)) return 'email';
  if (/\b(?:url|web address|hyperlink)\b/.test(head)) return 'url';
  if (/\bphone\b/.test(head)) return 'phone';
  if (/\b(?:date|deadline)\b/.test(head)) return 'date';
  return null;
}

function roleOf(words: string[], name: string, kind: Kind, description: string, schema: ExtractionSchema): [Role | null, string | null] {
  if (kind === 'array') {
    return [words.some((w) => /^(?:tags?|labels?|keywords?|topics|hashtags|categories)$/.test(w)) ? 'tags' : null, null];
  }
  if (kind !== 'string') return [null, null];
  const by = /^([a-z]+)_by$/.exec(name);
  if (by !== null) return ['agent', by[1] as string];
  for (const [role, re] of ROLE_WORDS) {
    if (!words.some((w) => re.test(w))) continue;
    if (role === 'title' && isPeopleSchema(schema)) return ['job', null];
    return [role, null];
  }
  const notPerson = /^(?:company|org|organization|product|project|file|domain|app|schema|brand|business|event|team|group|channel|page|site|repo|repository|display|host|model|index|collection|key|tool|agent)$/;
  if ((words.includes('name') || words.includes('contact') || words.includes('person')) && !words.some((w) => notPerson.test(w))) {
    return ['person', null];
  }
  if (/\b(?:company|organi[sz]ation|employer)\b/.test(description)) return ['company', null];
  if (/\b(?:job title|role|position)\b/.test(description)) return ['job', null];
  if (/\b(?:full name|person['’]?s name|name of the (?:person|contact|lead|customer|user))\b/.test(description)) return ['person', null];
  return [null, null];
}

/** A schema about a person (a `title` there is a job title, not a page title). */
function isPeopleSchema(schema: ExtractionSchema): boolean {
  const names = Object.keys(schema.properties).flatMap(wordsOf);
  return names.some((w) => /^(?:company|employer|organization|email|phone)$/.test(w)) && !names.some((w) => /^(?:url|link)$/.test(w));
}

/** The words a description describes its field with, leaving out examples ("e.g. …", quoted values). */
function descriptionWords(description: string): string[] {
  const own = description.split(/\be\.g\.|\bfor example\b|\bsuch as\b|\bi\.e\.|\blike\s+["“]/)[0] ?? '';
  return own.replace(/["“][^"”]*["”]/g, ' ').match(/[a-z][a-z-]{2,}/g) ?? [];
}

function planFields(schema: ExtractionSchema): Field[] {
  const fields: Field[] = Object.entries(schema.properties).map(([name, property]) => {
    const words = wordsOf(name);
    const kind = kindOf(property);
    const description = (property.description ?? '').toLowerCase();
    const format = kind === 'string' ? formatOf(words, name, description) : null;
    const [role, verb] = format === null ? roleOf(words, name, kind, description, schema) : [null, null];
    const base = words.join(' ');
    const keys = [base, ...pluralVariants(base)];
    if (verb !== null) keys.push(`${verb} by`);
    if (format === 'date' && words.includes('due')) keys.push('due date', 'due', 'deadline', 'due by');
    // a leading is_/has_ is not how people write the flag: "is_vip" is "VIP"
    if (kind === 'boolean' && words.length > 1 && /^(?:is|has|have|can|was|wants|needs|did|does)$/.test(words[0] as string)) {
      keys.push(words.slice(1).join(' '));
    }
    return {
      name,
      kind,
      format,
      role,
      verb,
      keys,
      descKeys: descriptionWords(description).filter((w) => !STOPWORDS.has(w) && !(property.type === 'string' && property.enum?.includes(w))),
      members: property.type === 'string' && property.enum !== undefined ? property.enum : [],
    };
  });
  // the usual words for a role or format, unless another field is called that
  const own = new Set(fields.flatMap((f) => f.keys));
  const claimed = new Set<string>();
  for (const field of fields) {
    for (const alias of ROLE_ALIASES[field.role ?? field.format ?? ('none' as Role)] ?? []) {
      if (!own.has(alias) && !claimed.has(alias)) {
        field.keys.push(alias);
        claimed.add(alias);
      }
    }
  }
  const allKeys = new Set([...own, ...claimed, ...fields.flatMap((f) => f.members.map(normalizeMember))].flatMap((k) => [k, ...k.split(' ')]));
  // a description word shared by two fields ("lead" in "company the lead works for" and
  // "the lead's budget") names neither
  const descriptionUses = new Map<string, number>();
  for (const word of fields.flatMap((f) => [...new Set(f.descKeys)])) descriptionUses.set(word, (descriptionUses.get(word) ?? 0) + 1);
  for (const field of fields) {
    field.keys = [...new Set(field.keys)].sort((a, b) => b.length - a.length);
    field.descKeys = [...new Set(field.descKeys.filter((w) => !allKeys.has(w) && descriptionUses.get(w) === 1))];
  }
  return fields;
}

// ---------------------------------------------------------------------------------------------
// Small text helpers.

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const phrasePattern = (phrase: string): string => phrase.split(/[\s_-]+/).map(escape).join('[\\s_-]+');
const keyRegexCache = new Map<string, RegExp>();
/** Phrases whose regexes are kept at most: schemas' own words and members, bounded whatever schemas come. */
const KEY_REGEX_CACHE_SIZE = 20_000;

/** Whole-word, case-insensitive occurrences of a phrase (`due date` also matches `due_date`, `Due-Date`). */
function keyRegex(phrase: string): RegExp {
  let re = keyRegexCache.get(phrase);
  if (re === undefined) {
    if (keyRegexCache.size >= KEY_REGEX_CACHE_SIZE) keyRegexCache.clear();
    re = new RegExp(`(?<![\\p{L}\\p{N}_@#./-])${phrasePattern(phrase)}(?![\\p{L}\\p{N}_@]|-\\p{L})`, 'giu');
    keyRegexCache.set(phrase, re);
  }
  re.lastIndex = 0;
  return re;
}

const containsKey = (text: string, keys: readonly string[]): boolean => keys.some((k) => keyRegex(k).test(text));
const wordCount = (text: string): number => text.trim().split(/\s+/).filter((w) => w !== '').length;
const normalizeMember = (s: string): string => s.toLowerCase().replace(/[\s_-]+/g, ' ').trim();

/** Sentences and other independent pieces: split after `.!?` + space, at line breaks and `;`. */
function splitClauses(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+|;\s*/)
    .map((c) => c.trim())
    .filter((c) => c !== '');
}

/** Trailing connectors and punctuation a value picks up before the next label: "Jane Doe and my" → "Jane Doe". */
function trimValue(raw: string): string {
  let value = raw.trim();
  for (;;) {
    const next = value
      .replace(/[\s,;:(–—-]+$/u, '')
      .replace(/\s+(?:and|but|also|plus|&|with|then|my|our|your|his|her|their|its|the|a|an|is|are|was)$/i, '')
      .replace(/[.!?]+$/, '')
      .trim();
    if (next === value) break;
    value = next;
  }
  if (value.endsWith(')') && !value.includes('(')) value = value.slice(0, -1).trim();
  return stripQuotes(value);
}

const NEGATED_BEFORE = /(?:\b(?:not|no|never|without|non|no longer|nor|neither)|n['’]t)\s+(?:[\p{L}-]+\s+){0,1}$/iu;

const ROLE_NOUNS = new Set(
  (
    'engineer developer programmer manager director designer founder cofounder co-founder ceo cto cfo coo cmo cio ciso cpo cro vp svp evp ' +
    'president head lead leader analyst consultant architect scientist officer owner partner recruiter marketer specialist coordinator ' +
    'administrator admin student teacher professor researcher intern associate executive representative rep accountant lawyer attorney ' +
    'nurse doctor physician writer editor chief principal buyer freelancer contractor advisor adviser strategist assistant secretary ' +
    'chair chairman chairwoman chairperson treasurer agent broker planner supervisor technician operator sre devops pm em ' +
    'salesperson journalist photographer producer investor entrepreneur'
  ).split(' '),
);
const DEPARTMENTS = new Set(
  'sales marketing engineering product growth operations finance design hr people data research support success technology it ops security legal partnerships revenue infrastructure platform'.split(' '),
);
const isRoleNoun = (word: string): boolean => word.toLowerCase().replace(/[^a-z-]/g, '').split('-').some((part) => ROLE_NOUNS.has(part));

// ---------------------------------------------------------------------------------------------
// Cutting values free of what belongs to other fields or to nobody.

/** Cuts a free-text value where a clause about another field starts: ", it's high priority", " (owner: Bob)". */
function cutAtOtherFields(value: string, field: Field, fields: readonly Field[]): string {
  const others = fields.filter((f) => f !== field).flatMap((f) => f.keys);
  for (const sep of value.matchAll(/,\s*|\s+(?:and|with|but|so)\s+|\s*[([]|\s+[–—-]\s+/gi)) {
    const rest = value.slice(sep.index + sep[0].length);
    const segment = rest.split(/,|\s+(?:and|with|but)\s+|[([]/i)[0] ?? '';
    if (containsKey(segment, others)) return value.slice(0, sep.index);
  }
  return value;
}

/** How a deadline starts when it is not a full date: "Friday", "tomorrow", "the end of May", "next week", "EOD", "Q3". */
const DEADLINE_WORDS =
  /^(?:tomorrow|today|tonight|eod|eow|cob|eom|asap|(?:the\s+)?end\s+of|next\s+\w+|this\s+(?:week|month|quarter|year|\w+day)|(?:mon|tues|wednes|thurs|fri|satur|sun)day|(?:january|february|march|april|may|june|july|august|september|october|november|december)|q[1-4])\b/i;

/** A task without its deadline: "send the report by March 3, 2026" → "send the report". */
function cutDeadline(value: string): string {
  for (const m of value.matchAll(/\s+(?:by|before|until|till|no later than|due|on)\s+/gi)) {
    const rest = value.slice(m.index + m[0].length);
    if (DEADLINE_WORDS.test(rest) || findDates(rest).some((d) => d.start === 0)) return value.slice(0, m.index);
  }
  return value.replace(/\s+(?:tomorrow|today|tonight|asap|this week|next week|this month|next month)\b.*$/i, '');
}

/** A decision without a trailing "on <date>" or "by <person>", and without its reasons. */
function cutDecision(value: string): string {
  let v = value.split(/\s+(?:because|since|as|due to|given that|so that|in order to)\s+|,\s*|\s+[–—-]\s+/i)[0] ?? '';
  for (const m of v.matchAll(/\s+(?:on|as of|effective|starting|from)\s+/gi)) {
    if (findDates(v.slice(m.index + m[0].length)).some((d) => d.start === 0)) {
      v = v.slice(0, m.index);
      break;
    }
  }
  const by = /\s+by\s+(?=[A-Z])/.exec(v);
  if (by !== null && leadingPersonName(v.slice(by.index + by[0].length)) !== null) v = v.slice(0, by.index);
  return v.replace(/^(?:to|that)\s+/i, '');
}

// ---------------------------------------------------------------------------------------------
// Reading a value of a field's type out of the text that follows its label.

interface Context {
  fields: readonly Field[];
}

const NUMBER_FILLER =
  /^(?:\s*(?:[:=~≈]|-(?=\s)|\(|\b(?:is|was|are|were|of|about|around|roughly|approximately|approx\.?|circa|ca\.?|at|up to|under|over|below|above|max(?:imum)?|min(?:imum)?|only|just|a|an|total(?:ling|s)?|set to|will be|would be|should be|be|currently|now|estimated(?: at)?|expected(?: to be)?|some|nearly|almost|close to|exactly|is about|of about)\b|['’]s\b))*\s*/i;

/** The number a text starts with (after filler such as "about", "of", "is"), never one inside a date or phone number. */
function leadingNumber(text: string, integer: boolean): number | undefined {
  const start = NUMBER_FILLER.exec(text)?.[0].length ?? 0;
  const protect = [...findDates(text), ...findPhones(text), ...findEmails(text), ...findUrls(text)];
  const first = findNumbers(text, protect).find((n) => n.start >= start);
  if (first === undefined) return undefined;
  // only currency or sign between the filler and the digits
  if (!/^[\s$€£¥₹+-]*(?:USD|EUR|GBP|CHF|CAD|AUD|JPY|INR)?\s*$/i.test(text.slice(start, first.start))) return undefined;
  if (integer && !Number.isSafeInteger(first.value)) return undefined;
  return first.value;
}

const TRUE_WORDS = /^(?:yes|y|yep|yeah|true|on|enabled|1|sure|correct|affirmative|definitely|absolutely)\b/i;
const FALSE_WORDS = /^(?:no|n|nope|false|off|disabled|0|not|never|negative|none)\b/i;

/** The member of `members` named near the start of `text` ("in progress" is `in_progress`), unless negated. */
function leadingMember(text: string, members: readonly string[]): string | undefined {
  const head = text.split(/\s+/).slice(0, 5).join(' ');
  let best: { member: string; index: number } | undefined;
  for (const member of members) {
    const re = keyRegex(normalizeMember(member));
    for (const m of head.matchAll(re)) {
      if (NEGATED_BEFORE.test(head.slice(0, m.index))) continue;
      if (best === undefined || m.index < best.index || (m.index === best.index && member.length > best.member.length)) best = { member, index: m.index };
    }
  }
  return best?.member;
}

function teamPhrase(text: string): string | null {
  const m = /^(?:the\s+|our\s+)?(?:[\p{L}-]+\s+){0,2}(?:team|board|committee|group|council|leadership|management|steering committee)\b/iu.exec(text.trim());
  return m === null ? null : m[0];
}

/** Reads a labelled value as the field's type; undefined when the text does not state one. */
function readValue(field: Field, raw: string, ctx: Context): unknown {
  const value = trimValue(raw);
  if (isPlaceholder(value)) return undefined;
  if (field.kind !== 'boolean' && /^(?:not|no|never|none)\b/i.test(value)) return undefined;
  switch (field.kind) {
    case 'enum':
      return leadingMember(value, field.members);
    case 'number':
    case 'integer':
      return leadingNumber(value, field.kind === 'integer');
    case 'boolean':
      return TRUE_WORDS.test(value) ? true : FALSE_WORDS.test(value) ? false : undefined;
    case 'array': {
      const items = splitList(value).filter((item) => wordCount(item) <= 8 && !isPlaceholder(item));
      return items.length > 0 ? items : undefined;
    }
    case 'string':
      return readString(field, value, ctx);
  }
}

function readString(field: Field, value: string, ctx: Context): string | undefined {
  switch (field.format) {
    case 'email':
      return findEmails(value)[0]?.value;
    case 'url':
      return findUrls(value)[0]?.value;
    case 'phone':
      return findPhones(value)[0]?.value;
    case 'date':
      return findDates(value)[0]?.value;
    default:
      break;
  }
  switch (field.role) {
    case 'person':
    case 'assignee':
    case 'agent': {
      const short = wordCount(value) <= 3;
      const name = leadingPersonName(value, short) ?? teamPhrase(value);
      if (name !== null) return name;
      return wordCount(value) <= 4 && !/\d/.test(value) ? value.replace(/^@/, '') : undefined;
    }
    case 'company': {
      const cut = value.split(/,|\s+(?:in|based|where|which|who|as|and (?:i|we|my|our))\s+/i)[0]?.trim() ?? '';
      return cut !== '' && wordCount(cut) <= 6 ? trimValue(cut) : undefined;
    }
    case 'job': {
      const cut = value.split(/,|\s+(?:at|for|with|in)\s+/i)[0]?.trim() ?? '';
      return cut !== '' && wordCount(cut) <= 6 ? trimValue(cut) : undefined;
    }
    case 'task':
      return freeText(cutDeadline(cutAtOtherFields(value, field, ctx.fields)));
    case 'decision':
      return freeText(cutDecision(cutAtOtherFields(value, field, ctx.fields)));
    case 'subject':
      return freeText(cutAtOtherFields(value, field, ctx.fields));
    default:
      return freeText(cutAtOtherFields(value, field, ctx.fields));
  }
}

function freeText(value: string): string | undefined {
  const v = trimValue(value);
  if (v === '' || isPlaceholder(v) || !/[\p{L}\p{N}]/u.test(v) || v.length > 2000) return undefined;
  return v;
}

// ---------------------------------------------------------------------------------------------
// Pass 1: labels — `field: value`, `field = value`, `my field is value`.

interface Label {
  field: Field;
  start: number;
  valueStart: number;
  strong: boolean;
  /** Length of the key, to prefer "due date" over "date" where they overlap. */
  keyLength: number;
  /** From "observation about X: …": what the value is about. */
  about: string | null;
}

const STRONG_SEPARATOR = /^\s*(?:\([^)]{0,40}\)\s*)?(?::(?!\/\/)|=|–|—|-(?=\s))\s*/;
const ABOUT_SEPARATOR = /^\s+(?:about|on|regarding|for|re)\s+([^:;]{1,60}?)\s*:\s*/i;
/** "Alternatives considered: …", "Phone number: …", "Notes to self: …" */
const WORDED_SEPARATOR = /^\s+(?:[\p{L}-]+\s+)?[\p{L}-]+\s*:(?!\/\/)\s*/u;
const WEAK_SEPARATOR = /^(?:['’]s\s+|\s+(?:is|are|was|were|will be|would be|should be|shall be|equals|set to|has been|reads|says)\s+(?:now\s+|currently\s+)?)/i;
const OF_SEPARATOR = /^\s+of\s+/i;
const LIST_SEPARATOR = /^\s+(?:include|includes|including|such as|are|is)\s*:?\s+/i;
const LABEL_CONTEXT = /(?:^|[,;:(–—-]|\b(?:my|our|your|his|her|their|its|the|a|an|and|with|but|so|also|plus|whose|current)|[\p{L}]['’]s)\s*$/iu;
const BREAK_BEFORE = /(?:[,;(]|\band\b|\bbut\b|\balso\b|\bplus\b)\s*(?:(?:my|our|your|his|her|their|its|the|a|an)\s+)?$/i;

function findLabels(clause: string, fields: readonly Field[]): Label[] {
  const labels: Label[] = [];
  for (const field of fields) {
    const candidates: Array<[string, boolean]> = [...field.keys.map((k): [string, boolean] => [k, false]), ...field.descKeys.map((k): [string, boolean] => [k, true])];
    for (const [key, fromDescription] of candidates) {
      for (const m of clause.matchAll(keyRegex(key))) {
        const end = m.index + m[0].length;
        const rest = clause.slice(end);
        const push = (length: number, strong: boolean, about: string | null = null): void => {
          labels.push({ field, start: m.index, valueStart: end + length, strong, keyLength: m[0].length + (fromDescription ? 0 : 100), about });
        };
        const strong = STRONG_SEPARATOR.exec(rest);
        // a description word labels a value only as the first thing said: "Contact: Jane Doe"
        if (fromDescription) {
          if (strong !== null && /(?:^|[,;(])\s*$/.test(clause.slice(0, m.index))) push(strong[0].length, true);
          continue;
        }
        if (strong !== null) {
          push(strong[0].length, true);
          continue;
        }
        const about = ABOUT_SEPARATOR.exec(rest);
        if (about !== null) {
          push(about[0].length, true, about[1] as string);
          continue;
        }
        const worded = WORDED_SEPARATOR.exec(rest);
        if (worded !== null && /(?:^|[,;(])\s*$/.test(clause.slice(0, m.index))) {
          push(worded[0].length, true);
          continue;
        }
        if (STRONG_ONLY.has(key)) continue;
        const contextOk = LABEL_CONTEXT.test(clause.slice(0, m.index));
        const weak =
          WEAK_SEPARATOR.exec(rest) ??
          ((field.kind === 'number' || field.kind === 'integer' || field.kind === 'array') ? OF_SEPARATOR.exec(rest) : null) ??
          (field.kind === 'array' ? LIST_SEPARATOR.exec(rest) : null);
        if (weak !== null && contextOk) {
          push(weak[0].length, false);
          continue;
        }
        // "due March 3, 2026", "deadline: by 2026-03-03": a date right after a date field's key
        if (field.format === 'date') {
          const lead = /^\s+(?:(?:is|by|on|of)\s+)?/i.exec(rest)?.[0] ?? '';
          if (lead !== '' && findDates(rest.slice(lead.length)).some((d) => d.start === 0)) push(lead.length, false);
        }
      }
    }
  }
  // where keys overlap, the longer one (a name key before a description word) is the label
  labels.sort((a, b) => a.start - b.start || b.keyLength - a.keyLength);
  const kept: Label[] = [];
  for (const label of labels) {
    const previous = kept.at(-1);
    if (previous !== undefined && label.start < previous.valueStart) {
      const previousEnd = previous.start + (previous.keyLength % 100);
      if (label.start < previousEnd && label.keyLength > previous.keyLength) kept[kept.length - 1] = label;
      continue;
    }
    kept.push(label);
  }
  return kept;
}

interface Labelled {
  field: Field;
  raw: string;
  strong: boolean;
  about: string | null;
}

/** Each label with the text it governs: up to the next label that starts a new statement. */
function labelledValues(clause: string, fields: readonly Field[]): Labelled[] {
  const labels = findLabels(clause, fields);
  const result: Labelled[] = [];
  let current: Label | null = null;
  for (const label of labels) {
    if (current === null) {
      current = label;
      continue;
    }
    // inside "note: the title is wrong", "title is" is part of the note
    const startsNew = !current.strong || label.strong || BREAK_BEFORE.test(clause.slice(0, label.start));
    if (!startsNew) continue;
    result.push({ field: current.field, raw: clause.slice(current.valueStart, label.start), strong: current.strong, about: current.about });
    current = label;
  }
  if (current !== null) result.push({ field: current.field, raw: clause.slice(current.valueStart), strong: current.strong, about: current.about });
  return result;
}

// ---------------------------------------------------------------------------------------------
// Pass 2: cues — how people state a role's value without naming the field.

/** Runs `read` on the text after each match of `cue`; the first value read wins. */
function afterCue(clause: string, cue: RegExp, read: (rest: string, before: string, cue: string) => string | null | undefined): string | undefined {
  for (const m of clause.matchAll(cue)) {
    const value = read(clause.slice(m.index + m[0].length), clause.slice(0, m.index), m[0]);
    if (value !== null && value !== undefined && value !== '') return value;
  }
  return undefined;
}

const personName = (rest: string): string | null => {
  const handle = /^@([A-Za-z][\w.-]*[A-Za-z0-9])/.exec(rest);
  if (handle !== null) return handle[1] as string;
  const name = leadingPersonName(rest);
  return name !== null && !name.split(/\s+/).some(isRoleNoun) ? name : null;
};

const SELF_NAME_CUE =
  /\b(?:my name is|my name's|name's|i am|i['’]m|this is|call me|meet|met|met with|spoke with|spoke to|talked to|talked with|call with|meeting with|new lead|lead|contact|regards|sincerely)\s*[:,]?\s+/gi;
const COMPANY_CUE = /\b(?:work|works|worked|working|employed|hired|am|is|are|i['’]m|we['’]re|she['’]s|he['’]s|they['’]re)\s+(?:at|for|with|by)\s+/gi;
// "from" names a company after a person ("I'm Jane from Acme", "Tom Baker from Globex"), not
// after "I'm" alone ("I'm from Spain")
const FROM_COMPANY_CUE = new RegExp(`(\\b(?:[Ii]['’]m|[Ii] am|[Tt]his is|[Mm]eet|[Mm]et|[Ll]ead:?)\\s+)?(${PERSON_RUN})\\s+from\\s+|\\b(?:[Ww]e['’]re|[Ww]e are|[Ii] work|[Ii]['’]m calling|[Ii] am calling)\\s+from\\s+`, 'gu');
const ROLE_AT = /\s+(?:at|@)\s+(?=[A-Z0-9])/g;
const ROLE_OF = /\s+(?:of|for|with)\s+(?=[A-Z0-9])/g;
const ROLE_BOUNDARY = new Set(
  'a an the i i\'m i’m im am is are was were as my our his her their i we he she you being become became work works working and who currently now also new hi hello hey this that it’s it\'s'.split(' '),
);
const ROLE_ARTICLE_CUE = /\b(?:i am|i['’]m|im|i work as|work as|works as|working as|she is|he is|she['’]s|he['’]s|is|as)\s+(?:a|an|the|our|their)\s+|\b(?:as|works as|work as|working as)\s+/gi;

/** "Head of Growth at Initech", "a product manager at Acme Corp" → the role and the company. */
function roleAtCompany(clause: string): { job: string; company: string } | undefined {
  for (const separators of [ROLE_AT, ROLE_OF]) {
    for (const m of clause.matchAll(separators)) {
      const company = leadingCompanyName(clause.slice(m.index + m[0].length));
      if (company === null) continue;
      if (separators === ROLE_OF && DEPARTMENTS.has((company.split(/\s+/)[0] as string).toLowerCase())) continue;
      const before = clause.slice(0, m.index).split(/\s+/).filter((w) => w !== '');
      const taken: string[] = [];
      for (let i = before.length - 1; i >= 0 && taken.length < 6; i--) {
        const word = before[i] as string;
        if (/[,;:(]$/.test(word) || ROLE_BOUNDARY.has(word.toLowerCase())) break;
        taken.unshift(word);
      }
      if (taken.length > 0 && taken.some(isRoleNoun)) return { job: taken.join(' '), company };
    }
  }
  return undefined;
}

function jobCue(clause: string): string | undefined {
  const atCompany = roleAtCompany(clause);
  if (atCompany !== undefined) return atCompany.job;
  const article = afterCue(clause, ROLE_ARTICLE_CUE, (rest) => {
    const phrase = rest.split(/[,.;!?()]|\s(?:at|for|with|in|on|and|who|based|from|since|but|to)\b/i)[0]?.trim() ?? '';
    return phrase !== '' && wordCount(phrase) <= 5 && phrase.split(/\s+/).some(isRoleNoun) ? phrase : null;
  });
  if (article !== undefined) return article;
  // ", CTO." — a comma-separated piece that is only a job title
  for (const piece of clause.split(/,/).slice(1)) {
    const p = trimValue(piece);
    if (p !== '' && wordCount(p) <= 4 && !/[\d@]/.test(p) && p.split(/\s+/).some(isRoleNoun) && !/^(?:i|we|he|she|they|it)\b/i.test(p)) return p;
  }
  return undefined;
}

function companyCue(clause: string): string | undefined {
  const atCompany = roleAtCompany(clause);
  if (atCompany !== undefined) return atCompany.company;
  const working = afterCue(clause, COMPANY_CUE, leadingCompanyName);
  if (working !== undefined) return working;
  for (const m of clause.matchAll(FROM_COMPANY_CUE)) {
    if (m[2] !== undefined) {
      const person = personName(m[2]);
      if (person === null || (m[1] === undefined && !person.includes(' '))) continue;
    }
    const company = leadingCompanyName(clause.slice(m.index + m[0].length));
    if (company !== null) return company;
  }
  return undefined;
}

const SIGNATURE = new RegExp(`^(${PERSON_RUN})\\s*(?:,|\\(|<|\\s[-–—]\\s)\\s*([^,]*)`, 'u');

function selfNameCue(clause: string): string | undefined {
  const named = afterCue(clause, SELF_NAME_CUE, personName);
  if (named !== undefined) return named;
  // "Priya here", "Tom Baker from Globex …" at the start of a sentence
  const here = new RegExp(`^(?:[Hh](?:i|ello|ey)[,!]?\\s+)?(${PERSON_RUN})\\s+(?:here\\b|from\\s+[A-Z])`, 'u').exec(clause);
  if (here !== null) {
    const name = personName(here[1] as string);
    if (name !== null && (/\shere\b/.test(here[0]) || name.includes(' '))) return name;
  }
  // "Ada Lovelace, CTO at Analytical Engines, …", "Ada Lovelace <ada@example.com>"
  const signature = SIGNATURE.exec(clause);
  if (signature !== null) {
    const name = personName(signature[1] as string);
    const next = signature[2] as string;
    if (name !== null && name.includes(' ') && (next.split(/\s+/).some(isRoleNoun) || findEmails(next).length > 0 || findPhones(next).length > 0)) return name;
  }
  return undefined;
}

/** What follows "will"/"please" when no task is meant: a state ("be happy"), a hedge, a negation or e-mail boilerplate. */
const NOT_A_TASK = /^(?:probably|maybe|perhaps|possibly|not|never|be|find attached|see attached|see below|note|let me know|let us know|feel free|advise|excuse|forgive)\b/i;

const ASSIGNED_CUE = /\b(?:assigned to|assign(?:ed)? it to|owned by|owner is|handled by|responsibility of|given to|delegated to)\s+/gi;
const MODAL = String.raw`(?:\s+(?:really\s+|also\s+|still\s+|first\s+)?(?:needs?\s+to|has\s+to|have\s+to|got\s+to|must|should|will|is\s+going\s+to|owns|is\s+responsible\s+for|is\s+handling|is\s+on|to)|['’]ll)\s+`;
const NAMED_SUBJECT = new RegExp(`(?:^|[:;,]\\s*|\\b(?:and|then|so)\\s+)(${PERSON_RUN})${MODAL}`, 'gu');

function assigneeCue(clause: string): string | undefined {
  const assigned = afterCue(clause, ASSIGNED_CUE, personName);
  if (assigned !== undefined) return assigned;
  for (const m of clause.matchAll(NAMED_SUBJECT)) {
    const name = personName(m[1] as string);
    if (name !== null && !NOT_A_TASK.test(clause.slice(m.index + m[0].length))) return name;
  }
  const mention = /(?<![\w@])@([A-Za-z][\w.-]*[A-Za-z0-9])(?![\w.-]*\.[a-z]{2,}\b)/.exec(clause);
  return mention?.[1];
}

function agentCue(clause: string, verb: string): string | undefined {
  const by = afterCue(clause, new RegExp(`\\b${escape(verb)}\\s+by\\s+`, 'gi'), (rest) => personName(rest) ?? teamPhrase(rest));
  if (by !== undefined) return by;
  const team = new RegExp(`\\b((?:the|our)\\s+(?:[\\p{L}-]+\\s+){0,2}(?:team|board|committee|group|council)|management|leadership)\\s+(?:has\\s+|had\\s+|finally\\s+|officially\\s+|jointly\\s+)?${escape(verb)}\\b`, 'iu').exec(clause);
  if (team !== null) return team[1];
  for (const m of clause.matchAll(new RegExp(`(${PERSON_RUN})\\s+(?:has\\s+|had\\s+|finally\\s+|officially\\s+)?${escape(verb)}\\b`, 'gu'))) {
    const name = personName(m[1] as string);
    if (name !== null) return name;
  }
  return undefined;
}

const PRONOUN_TASK = /(?:^|[:;,]\s*|\b(?:and|then|so)\s+)(?:i|we|you|he|she|they|someone|somebody)(?:\s+(?:really\s+|also\s+|still\s+|first\s+)?(?:needs?\s+to|has\s+to|have\s+to|got\s+to|gotta|must|should|will|am\s+going\s+to|is\s+going\s+to|are\s+going\s+to|plans?\s+to|promised\s+to)|['’]ll)\s+/gi;
const IMPERATIVE_TASK = /^(?:need|needs|have|got)\s+to\s+|\b(?:please|remember to|don['’]t forget to|do not forget to|remind me to|make sure to|make sure you|action item:?|reminder:?|follow up:?|follow-up:?)\s+/gi;
const NAMED_TASK = new RegExp(`(?:^|[:;,]\\s*|\\b(?:and|then|so)\\s+)(${PERSON_RUN})(?:\\s+(?:really\\s+|also\\s+|still\\s+|first\\s+)?(?:needs?\\s+to|has\\s+to|have\\s+to|must|should|will|is\\s+going\\s+to|promised\\s+to|to)|['’]ll)\\s+`, 'gu');

function taskCue(clause: string, field: Field, ctx: Context): string | undefined {
  const read = (rest: string): string | undefined => {
    if (NOT_A_TASK.test(rest)) return undefined;
    return freeText(cutDeadline(cutAtOtherFields(rest.split(/,|\s+(?:because|so that|since)\s+/i)[0] ?? '', field, ctx.fields)));
  };
  const imperative = afterCue(clause, IMPERATIVE_TASK, read);
  if (imperative !== undefined) return imperative;
  for (const m of clause.matchAll(NAMED_TASK)) {
    if (personName(m[1] as string) === null) continue;
    const value = read(clause.slice(m.index + m[0].length));
    if (value !== undefined) return value;
  }
  return afterCue(clause, PRONOUN_TASK, read);
}

const DECISION_CUE = /\b(?:decided|agreed|chose|opted|resolved|committed|settled)\s+(?:to|that|on|upon|for)\s+|\b(?:going|go|went)\s+with\s+|\b(?:we|i|they)\s+(?:will|['’]ll|are going to)\s+(?=(?:switch|move|migrate|adopt|use|keep|drop|stop|start|replace|standardi[sz]e)\b)/gi;

function decisionCue(clause: string, field: Field, ctx: Context): string | undefined {
  return afterCue(clause, DECISION_CUE, (rest) => {
    if (findDates(rest).some((d) => d.start === 0)) return undefined;
    return freeText(cutDecision(cutAtOtherFields(rest, field, ctx.fields)));
  });
}

const RATIONALE_CUE = /\b(?:because(?:\s+of)?|since|due to|given that|owing to|as a result of|in order to|so that|the reason (?:is|was|being)(?: that)?)\s+/gi;

function rationaleCue(clause: string, field: Field, ctx: Context): string | undefined {
  return afterCue(clause, RATIONALE_CUE, (rest, _before, cue) => {
    // "since 2020", "since last week" is a time, not a reason
    if (/^since/i.test(cue) && (findDates(rest).some((d) => d.start === 0) || /^(?:\d|last|then|yesterday|monday|tuesday|wednesday|thursday|friday|january|february|march|april|may|june|july|august|september|october|november|december)/i.test(rest))) {
      return undefined;
    }
    const value = rest.split(/\s+[–—-]\s+/)[0] ?? '';
    const cut = cutAtOtherFields(value, field, ctx.fields).replace(/,?\s+(?:on|as of)\s+.*$/i, (tail) => (findDates(tail).length > 0 ? '' : tail));
    return freeText(cut);
  });
}

const OBSERVED_CUE = /\b(?:noticed|observed|discovered|realized|realised|spotted|found out|it seems|it appears|it looks like|apparently|it turns out)\s+(?:that\s+)?|\b(?:saw|found|learned|learnt|see|notice)\s+that\s+/gi;

const HABIT = String.raw`(?:always\s+|usually\s+|often\s+|never\s+|really\s+|strongly\s+)?(?:prefers|likes|loves|hates|dislikes|wants|uses|asked|asks|complained|mentioned|said|reported|expects|avoids|enjoys|struggles|renews|buys|pays)\b`;
const PERSON_HABIT = new RegExp(`(?:^|[:;,]\\s*)(${PERSON_RUN})\\s+${HABIT}`, 'gu');

function observationCue(clause: string, field: Field, ctx: Context): string | undefined {
  const observed = afterCue(clause, OBSERVED_CUE, (rest) => freeText(cutAtOtherFields(rest, field, ctx.fields)));
  if (observed !== undefined) return observed;
  // "Dana prefers invoices by email": a statement of what someone does or likes
  for (const m of clause.matchAll(PERSON_HABIT)) {
    if (personName(m[1] as string) === null) continue;
    const start = m.index + m[0].indexOf(m[1] as string);
    return freeText(cutAtOtherFields(clause.slice(start), field, ctx.fields));
  }
  return undefined;
}

const ABOUT_CUE = /^(?:about|regarding|concerning|re:?|on the topic of)\s+([^,:;.!?]{1,80}?)\s*[:,—–]\s*(\S.*)$/i;
const stripArticle = (s: string): string => s.replace(/^(?:the|a|an|our|my|their|this|that|these|those|its)\s+/i, '');

const VERBISH =
  /^(?:is|are|was|were|seems|seem|seemed|looks|looked|feels|felt|has|have|had|keeps|kept|can|cannot|can['’]t|could|couldn['’]t|won['’]t|will|would|wouldn['’]t|doesn['’]t|don['’]t|didn['’]t|isn['’]t|aren['’]t|wasn['’]t|weren['’]t|does|did|tends|tended|appears|appeared|became|becomes|crashes|crashed|fails|failed|breaks|broke|loads|loaded|takes|took|prefers|likes|loves|hates|dislikes|wants|uses|asked|asks|complained|mentioned|said|reported|expects|avoids|enjoys|struggles|renews|buys|pays)$/i;

/** "the checkout page is slow on mobile" → "checkout page": the words before the first verb. */
function subjectOf(statement: string): string | undefined {
  const words = statement.replace(/^that\s+/i, '').split(/\s+/);
  const verb = words.findIndex((w) => VERBISH.test(w.replace(/[,.;:]$/, '')));
  if (verb < 1 || verb > 6) return undefined;
  const subject = stripArticle(words.slice(0, verb).join(' '));
  if (subject === '' || /^(?:it|they|he|she|we|i|you|this|that|there|these|those|things?|everything|something|nothing)$/i.test(subject)) return undefined;
  return trimValue(subject);
}

const TITLE_CUE = /\b(?:titled|entitled|called|named|headline)\s*:?\s+/gi;
const QUOTED = /["“]([^"“”]{2,200})["”]/g;

function titleCue(clause: string): string | undefined {
  return afterCue(clause, TITLE_CUE, (rest) => /^["“]([^"“”]{2,200})["”]/.exec(rest)?.[1]?.trim());
}

function titleCueUnquoted(clause: string): string | undefined {
  return afterCue(clause, /\b(?:titled|entitled)\s*:?\s+/gi, (rest) => freeText(rest.split(/[,;]|\s[–—-]\s|\.\s/)[0] ?? ''));
}

// ---------------------------------------------------------------------------------------------
// Pass 3: enums, numbers and flags next to the words that name them.

/** Degree words that describe anything ("the risk is high"): an enum takes them only next to its field's name. */
const GENERIC_MEMBERS = new Set(['low', 'medium', 'high', 'none', 'other', 'unknown', 'normal', 'open', 'closed', 'active', 'inactive', 'yes', 'no', 'true', 'false', 'ok', 'good', 'bad']);
const RECORD_NOUNS = /\b(?:it|this|that|task|item|ticket|issue|lead|deal|prospect|customer|contact|client|account|opportunity|request|action|todo|bug|project|status|stage|they|he|she)\b/i;
const COPULA = /(?:\b(?:is|are|was|were|been|be|now|marked|marked as|set to|set as|moved to|moving to|changed to|became|becomes|got|gets)|['’]s)\s+(?:now\s+|already\s+|finally\s+|officially\s+|fully\s+|as\s+)?(?:an?\s+)?$/i;

/** An enum field's members as `enumCue` reads them, worked out once per field. */
interface EnumPlan {
  keyAfter: RegExp;
  keyBefore: RegExp;
  /** Longest first, each with its normalized form and the ASCII word a clause must contain to name it (null: not ASCII, always tried). */
  members: Array<{ member: string; normalized: string; probe: string | null }>;
  /** Normalized members of the schema's other enum fields. */
  shared: ReadonlySet<string>;
}

const enumPlans = new WeakMap<Field, EnumPlan>();

function enumPlan(field: Field, fields: readonly Field[]): EnumPlan {
  let plan = enumPlans.get(field);
  if (plan === undefined) {
    const keys = field.keys.map(phrasePattern).join('|');
    plan = {
      keyAfter: new RegExp(`^[\\s-]*(?:${keys})(?![\\p{L}\\p{N}])`, 'iu'),
      keyBefore: new RegExp(`(?:${keys})\\s*(?:[:=-]\\s*|\\s(?:is|was|are|now|currently|set to|changed to|moved to|marked as|of|at|level|=)\\s+)*\\s*$`, 'iu'),
      members: [...field.members]
        .sort((a, b) => b.length - a.length)
        .map((member) => {
          const normalized = normalizeMember(member);
          const first = normalized.split(' ')[0] ?? '';
          return { member, normalized, probe: /^[\x20-\x7e]+$/.test(first) ? first : null };
        }),
      shared: new Set(fields.filter((f) => f !== field && f.kind === 'enum').flatMap((f) => f.members.map(normalizeMember))),
    };
    enumPlans.set(field, plan);
  }
  return plan;
}

function enumCue(clause: string, field: Field, fields: readonly Field[]): string | undefined {
  const { keyAfter, keyBefore, members, shared } = enumPlan(field, fields);
  const lower = clause.toLowerCase();
  for (const { member, normalized, probe } of members) {
    // a member whose first word the clause lacks cannot be named in it: no regex run for it
    if (probe !== null && !lower.includes(probe)) continue;
    for (const m of clause.matchAll(keyRegex(normalized))) {
      const before = clause.slice(0, m.index);
      const after = clause.slice(m.index + m[0].length);
      if (NEGATED_BEFORE.test(before)) continue;
      if (keyAfter.test(after) || keyBefore.test(before)) return member;
      const distinctive = !GENERIC_MEMBERS.has(normalized) && !shared.has(normalized);
      if (distinctive && COPULA.test(before)) {
        const subject = before.replace(COPULA, '').split(/\s+/).slice(-4).join(' ');
        const ownWords = fields.flatMap((f) => f.keys);
        if (RECORD_NOUNS.test(subject) || containsKey(subject, ownWords)) return member;
      }
    }
  }
  return undefined;
}

function numberCue(clause: string, field: Field): number | undefined {
  const integer = field.kind === 'integer';
  const protect = [...findDates(clause), ...findPhones(clause), ...findEmails(clause), ...findUrls(clause)];
  const numbers = findNumbers(clause, protect);
  for (const key of field.keys) {
    for (const m of clause.matchAll(keyRegex(key))) {
      const after = leadingNumber(clause.slice(m.index + m[0].length), integer);
      if (after !== undefined) return after;
      // "$5,000 budget", "12 employees", "40 hours per week"
      const before = numbers.find((n) => n.end <= m.index && /^\s*(?:[A-Za-z%]{1,6}\s+)?(?:in\s+|of\s+)?$/.test(clause.slice(n.end, m.index)));
      if (before !== undefined && !NEGATED_BEFORE.test(clause.slice(0, before.start)) && (!integer || Number.isSafeInteger(before.value))) return before.value;
    }
  }
  return undefined;
}

const POSITIVE_BEFORE = /(?:\b(?:is|are|am|was|were|has|have|had|with|does|did|do|yes|be|been)|['’]s|['’]re)\s+(?:(?:a|an|the|already|now|also|definitely|indeed|really|fully|officially)\s+){0,2}$/i;

function booleanCue(clause: string, field: Field): boolean | undefined {
  for (const key of field.keys) {
    for (const m of clause.matchAll(keyRegex(key))) {
      const before = clause.slice(0, m.index);
      if (NEGATED_BEFORE.test(before) || /\b(?:un|non)-?$/i.test(before)) return false;
      if (POSITIVE_BEFORE.test(before)) return true;
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// One piece of text → values.

type Values = Map<string, unknown>;

const HEDGE = /\b(?:i think|i guess|i believe|i suppose|i assume|not sure|maybe|perhaps|probably|possibly|might|could be|supposedly|i['’]m not certain|unsure|rumou?red)\b/i;

function startsWithMember(value: string, members: ReadonlySet<string>): boolean {
  const normalized = normalizeMember(value);
  return [...members].some((member) => normalized === member || normalized.startsWith(`${member} `));
}

/** Everything the text states for the fields, by every pass, the earlier pass winning. */
function extractFromText(text: string, fields: readonly Field[]): Values {
  const ctx: Context = { fields };
  const values: Values = new Map();
  const set = (field: Field, value: unknown): void => {
    if (value !== undefined && !values.has(field.name)) values.set(field.name, value);
  };
  // a hedged statement ("I think the budget is 5k, not sure") states nothing
  const clauses = splitClauses(text).filter((clause) => !HEDGE.test(clause));
  const enumMembers = new Set(fields.filter((f) => f.kind === 'enum').flatMap((f) => f.members.map(normalizeMember)));

  // labels: a later statement of the same field corrects an earlier one
  const labelled: Values = new Map();
  const aboutOf = new Map<string, string>();
  for (const clause of clauses) {
    for (const { field, raw, strong, about } of labelledValues(clause, fields)) {
      const value = readValue(field, raw, ctx);
      if (value === undefined) continue;
      // "the task is done" says what state it is in, not what the task is
      if (!strong && typeof value === 'string' && field.kind === 'string' && startsWithMember(value, enumMembers)) continue;
      labelled.set(field.name, value);
      if (about !== null) aboutOf.set(field.name, about);
    }
  }
  for (const field of fields) set(field, labelled.get(field.name));

  for (const field of fields) {
    if (values.has(field.name)) continue;
    for (const clause of clauses) {
      const value = cueValue(clause, field, ctx);
      if (value !== undefined) {
        set(field, value);
        break;
      }
    }
  }

  // what a labelled or "about X: …" statement is about, for a subject field
  const subject = fields.find((f) => f.role === 'subject' && !values.has(f.name));
  if (subject !== undefined) {
    const about = [...aboutOf.values()][0];
    const fromAbout = clauses.map((c) => ABOUT_CUE.exec(c)?.[1]).find((s) => s !== undefined);
    const observed = fields.find((f) => f.role === 'observation' && typeof values.get(f.name) === 'string');
    const derived = about ?? fromAbout ?? (observed !== undefined ? subjectOf(values.get(observed.name) as string) : undefined);
    if (derived !== undefined) set(subject, freeText(stripArticle(derived)));
  }

  // values with a recognisable form, for the one field of that form still empty
  const stated = clauses.join('\n');
  const used = new Set([...values.values()].map(String));
  const byFormat: Array<[Format, () => Found[]]> = [
    ['email', () => findEmails(stated)],
    ['url', () => findUrls(stated)],
    ['phone', () => findPhones(stated).filter((p) => !findUrls(stated).some((u) => u.start < p.end && p.start < u.end))],
    ['date', () => findDates(stated).filter((d) => !findUrls(stated).some((u) => u.start < d.end && d.start < u.end))],
  ];
  for (const [format, find] of byFormat) {
    const open = fields.filter((f) => f.format === format && !values.has(f.name));
    if (open.length !== 1) continue;
    const found = find().find((f) => !used.has(f.value));
    if (found !== undefined) set(open[0] as Field, found.value);
  }
  return values;
}

function cueValue(clause: string, field: Field, ctx: Context): unknown {
  switch (field.kind) {
    case 'enum':
      return enumCue(clause, field, ctx.fields);
    case 'number':
    case 'integer':
      return numberCue(clause, field);
    case 'boolean':
      return booleanCue(clause, field);
    case 'array':
      return listCue(clause, field);
    case 'string':
      break;
  }
  if (field.format !== null) return undefined;
  switch (field.role) {
    case 'person':
      return selfNameCue(clause);
    case 'company':
      return companyCue(clause);
    case 'job':
      return jobCue(clause);
    case 'assignee':
      return assigneeCue(clause);
    case 'agent':
      return agentCue(clause, field.verb as string);
    case 'task':
      return taskCue(clause, field, ctx);
    case 'decision':
      return decisionCue(clause, field, ctx);
    case 'rationale':
      return rationaleCue(clause, field, ctx);
    case 'observation': {
      const about = ABOUT_CUE.exec(clause);
      if (about !== null) return freeText(cutAtOtherFields(about[2] as string, field, ctx.fields));
      return observationCue(clause, field, ctx);
    }
    case 'subject': {
      const about = ABOUT_CUE.exec(clause);
      return about !== null ? freeText(stripArticle(about[1] as string)) : undefined;
    }
    case 'title':
      return titleCue(clause) ?? titleCueUnquoted(clause) ?? loneQuote(clause, ctx);
    default:
      return undefined;
  }
}

const INTEREST_CUE = /\b(?:interested in|asked about|curious about)\s+/gi;
const TAGGED_CUE = /\b(?:tagged|tag it|tag this)\s+(?:with|as)?\s*:?\s*/gi;

/** Lists without a label: "interested in a and b" for interests, "tagged with a, b" or #hashtags for tags. */
function listCue(clause: string, field: Field): string[] | undefined {
  const listAfter = (cue: RegExp): string[] | undefined => {
    for (const m of clause.matchAll(cue)) {
      const items = splitList(trimValue(clause.slice(m.index + m[0].length)));
      if (items.length > 0) return items;
    }
    return undefined;
  };
  if (field.keys.some((k) => /^interests?$/.test(k))) return listAfter(INTEREST_CUE);
  if (field.role !== 'tags') return undefined;
  const tagged = listAfter(TAGGED_CUE);
  if (tagged !== undefined) return tagged;
  const hashtags = findHashtags(clause);
  return hashtags.length > 0 ? hashtags : undefined;
}

/** The one quoted phrase of a text about a link is its title. */
function loneQuote(clause: string, ctx: Context): string | undefined {
  if (!ctx.fields.some((f) => f.format === 'url')) return undefined;
  const quotes = [...clause.matchAll(QUOTED)];
  return quotes.length === 1 ? quotes[0]?.[1]?.trim() : undefined;
}

// ---------------------------------------------------------------------------------------------
// Conversations.

const AFFIRMATION = /^(?:yes|yep|yeah|yup|correct|right|exactly|confirmed|that['’]s (?:right|correct)|sure|indeed|affirmative)\b[\s\p{P}]*(?:(?:that['’]s|it['’]s|all) (?:right|correct)[\s\p{P}]*)?$/iu;

/**
 * Values from a conversation: what each user message states, the latest message winning a
 * conflict. Assistant messages are not a source, except (a) a question that names one field
 * ("What is your budget?") makes the next user message an answer for it ("About $5,000"), and
 * (b) what the assistant stated counts when the user's reply is a bare confirmation ("Yes,
 * that's right"). System and tool messages are ignored.
 */
function extractFromMessages(messages: readonly ExtractionMessage[], fields: readonly Field[]): Values {
  const values: Values = new Map();
  const merge = (found: Values): void => {
    for (const [name, value] of found) {
      values.delete(name);
      values.set(name, value);
    }
  };
  let previous: ExtractionMessage | null = null;
  const roleOf = (message: ExtractionMessage): string => (typeof message.role === 'string' ? message.role.toLowerCase() : '');
  for (const message of messages) {
    const role = roleOf(message);
    if (role === 'user' && typeof message.content === 'string') {
      const text = message.content;
      const asked = previous !== null && roleOf(previous) === 'assistant' && typeof previous.content === 'string' ? previous.content : null;
      if (asked !== null && AFFIRMATION.test(text.trim())) {
        merge(extractFromText(asked, fields));
      } else {
        const found = extractFromText(text, fields);
        const question = asked !== null && /\?/.test(asked) ? askedField(asked, fields) : undefined;
        if (question !== undefined && !found.has(question.field.name)) {
          const answer = (splitClauses(text)[0] ?? '').replace(/^(?:it['’]s|it is|that['’]s|that would be|sure|ok|okay|yes|well|um|so)\b[,\s]*/i, '');
          const value = readValue(question.field, answer, { fields });
          if (value !== undefined) found.set(question.field.name, value);
        }
        merge(found);
      }
    }
    if (role === 'user' || role === 'assistant') previous = message;
  }
  return values;
}

/** The one field an assistant's question asks for, by its name's words. */
function askedField(question: string, fields: readonly Field[]): { field: Field } | undefined {
  const lastQuestion = question.split(/(?<=[.!?])\s+/).filter((s) => s.includes('?')).at(-1) ?? question;
  const asked = fields.filter((f) => containsKey(lastQuestion, f.keys));
  return asked.length === 1 ? { field: asked[0] as Field } : undefined;
}

// ---------------------------------------------------------------------------------------------

/**
 * Values explicitly stated in `input` for the properties of `schema`, found by rules — pure,
 * synchronous and deterministic (same input, same output; no clock, no network).
 *
 * How a value is found, first rule first:
 * 1. Labels keyed by the property's name in words (`due_date` is "due date"), its singular or
 *    plural and the usual words of its kind ("e-mail", "link", "deadline", "owner"):
 *    `field: value`, `field = value`, `my field is value`, `field of 5`, and, only with `:`/`=`,
 *    words of the property's description. A later label of the same field wins.
 * 2. Cues of common kinds of field: names ("my name is", "I'm Jane Doe", "this is …"),
 *    companies ("works at", "from Acme", "CTO at Initech"), job titles ("I'm a product manager
 *    at …", ", CTO,"), owners ("assigned to", "@carol", "Alice will …"), `<verb>_by` fields
 *    ("decided by Maria", "Maria decided"), tasks ("need to …", "please …", "Bob will …"),
 *    decisions ("decided to …", "agreed to …", "going with …"), reasons ("because …",
 *    "since …"), observations ("noticed that …", "about X: …"), titles ("titled "…"", a lone
 *    quotation beside a link), tags ("tags: a, b and c", "tagged with …", #hashtags); enum
 *    members next to the field's name ("high priority", "status: in progress") or, when the
 *    member is distinctive, after "is"/"marked as" about the record ("the lead is qualified");
 *    numbers next to the field's name ("budget around $50k", "12 employees", "$1,200" is 1200);
 *    booleans from "is/has <field>" (true) and a negation before it (false).
 * 3. Forms: the one email address, URL, phone number or full date left unclaimed goes to the
 *    one empty field of that form. Dates become YYYY-MM-DD; a date without a year stays as
 *    written ("March 3"); relative dates ("tomorrow", "next Friday") are never resolved.
 *
 * Enum values are only ever the schema's own members (no synonyms); negated values ("not
 * qualified") and placeholders ("TBD", "unknown") are not values, and a hedged sentence ("I
 * think …", "maybe", "not sure", "probably") states nothing at all.
 *
 * `messages`: user messages are the source, one at a time, the latest winning a conflict; an
 * assistant question naming one field makes the next user message its answer ("What is your
 * budget?" → "About $5,000"), and an assistant statement counts only when the user's reply is
 * a bare confirmation ("Yes, that's right"). System and tool messages are ignored.
 */
export function extractLocally(schema: ExtractionSchema, input: ExtractionInput): Record<string, unknown> {
  const fields = planFields(schema);
  const values = 'messages' in input ? extractFromMessages(input.messages, fields) : extractFromText(input.text ?? '', fields);
  return sanitizeExtraction(schema, Object.fromEntries(values));
}

/** The deterministic offline language model (`local`) for extraction: {@link extractLocally}. */
export class LocalExtractor implements Extractor {
  readonly model = 'local';

  extract(schema: ExtractionSchema, input: ExtractionInput): Promise<Record<string, unknown>> {
    try {
      return Promise.resolve(extractLocally(schema, input));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  facts(messages: readonly ExtractionMessage[]): Promise<string[]> {
    return Promise.resolve(sanitizeFacts({ facts: messages.filter((m) => m.role === 'user').flatMap((m) => statedFacts(m.content)) }));
  }

  /** Deterministic rules (`decideByRules`): near duplicates, attributes with a new value, retractions. */
  decide(facts: readonly FactCandidates[]): Promise<Decision[]> {
    return Promise.resolve(facts.map(decideByRules));
  }
}

const PLEASANTRY = /^(?:hi|hello|hey|good (?:morning|afternoon|evening)|thanks|thank you|ok|okay|sure|yes|no|bye|goodbye|cheers)\b[\s,.!]*(?:there|again|so much|a lot)?[\s.!]*$/i;
/** Sentences that ask for something rather than state something. */
const REQUEST = /^(?:(?:can|could|would|will) you|please|let'?s|tell me|show me|help me|what|how|why|when|where|who|which)\b/i;

/**
 * The statements in a message worth remembering, for the local model's `facts`: its sentences
 * minus questions, requests and pleasantries, with "remember that" dropped and end punctuation
 * trimmed. Wording is kept as the user wrote it. "(Please) forget that …" is kept: the decision
 * step deletes what it names.
 */
export function statedFacts(content: string): string[] {
  return content
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim().replace(/^[-*•]\s+/, '').replace(/^(?:please\s+)?(?:remember|note|keep in mind)(?: that)?[:,]?\s+/i, '').replace(/^please,?\s+(?=forget\b)/i, ''))
    .filter((s) => s.length > 0 && !s.endsWith('?') && !PLEASANTRY.test(s) && !REQUEST.test(s))
    .map((s) => s.replace(/[.!]+$/, '').trim())
    .map((s) => (s.length > 0 ? s[0]!.toUpperCase() + s.slice(1) : s))
    .filter((s) => s.length > 1);
}
