import { MAX_CATEGORIES, MAX_CATEGORY_DESCRIPTION, MAX_CATEGORY_NAME } from '../../contracts/memory-categories.js';
import { badRequest } from '../../lib/errors.js';
import type { Embedder } from '../../providers/embedder.js';

/** A category a memory may be given: its name, and what it covers (what the memory is compared with). */
export interface Category {
  name: string;
  description: string;
}

/**
 * mem0's default catalogue, the one a memory is categorized by unless its add names its own
 * (`custom_categories`). The descriptions are what a memory's embedding is compared with.
 */
export const DEFAULT_CATEGORIES: readonly Category[] = [
  { name: 'personal_details', description: 'Personal details: name, age, birthday, where one lives, languages, identity' },
  { name: 'family', description: 'Family: parents, children, partner, siblings, relatives, pets at home' },
  { name: 'professional_details', description: 'Work and career: job, employer, profession, colleagues, salary, office' },
  { name: 'sports', description: 'Sports and fitness: playing, training, teams, running, gym, matches' },
  { name: 'travel', description: 'Travel: trips, vacations, flights, hotels, visiting places and countries' },
  { name: 'food', description: 'Food and drink: meals, cooking, recipes, restaurants, diet, coffee and tea' },
  { name: 'music', description: 'Music: songs, bands, instruments, concerts, listening' },
  { name: 'health', description: 'Health: illness, allergies, medication, doctors, sleep, wellbeing' },
  { name: 'technology', description: 'Technology: computers, phones, software, programming, gadgets' },
  { name: 'hobbies', description: 'Hobbies: pastimes, crafts, reading, gardening, games, collecting' },
  { name: 'fashion', description: 'Fashion: clothes, style, shoes, brands, accessories' },
  { name: 'entertainment', description: 'Entertainment: movies, TV shows, books, podcasts, video games' },
  { name: 'milestones', description: 'Milestones: graduations, weddings, births, promotions, anniversaries, achievements' },
  { name: 'user_preferences', description: 'Preferences: likes, dislikes, favourites, how one wants things done' },
  { name: 'misc', description: 'Miscellaneous: anything else' },
];

/** The catalogue-less fallback: a memory close to no category gets this one when the catalogue has it. */
const FALLBACK = 'misc';
const NAME = /^[\p{L}\p{N}_ .&/-]+$/u;
/** The least cosine similarity (all-MiniLM-L6-v2) of a memory and a category's description for the category to be given. */
const MIN_SIMILARITY = 0.15;
/** Categories this close to the best one are given too (a tie: "my daughter turned five" is family and a milestone). */
const TIE = 0.01;
/** Catalogues whose description vectors are kept, per embedder. */
const CACHED_CATALOGUES = 64;

/**
 * mem0's `custom_categories` as its clients send them — a list of `{name: description}` objects
 * (one key each), or of names alone — as a catalogue; 400 naming the item when one is malformed.
 */
export function parseCustomCategories(raw: unknown, at = '/custom_categories'): Category[] {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_CATEGORIES) {
    throw badRequest('validation_failed', `custom_categories must be a list of 1 to ${MAX_CATEGORIES} categories, each {"name": "what it covers"} or a name.`, [{ path: at, message: `not a list of 1 to ${MAX_CATEGORIES} categories` }]);
  }
  const seen = new Set<string>();
  const categories = raw.flatMap((item: unknown, i) => {
    const path = `${at}/${i}`;
    const entries: Array<[string, unknown]> = typeof item === 'string' ? [[item, item]] : isObject(item) ? Object.entries(item) : [];
    if (entries.length === 0) throw invalid(path, 'is neither a name nor an object of {"name": "description"}');
    return entries.map(([name, description]) => {
      const trimmed = name.trim();
      if (!NAME.test(trimmed) || trimmed.length > MAX_CATEGORY_NAME) throw invalid(path, `names a category "${name.slice(0, 80)}"; names are 1–${MAX_CATEGORY_NAME} letters, digits, spaces and _ . & / -`);
      if (typeof description !== 'string' || description.length > MAX_CATEGORY_DESCRIPTION) throw invalid(path, `describes "${trimmed}" with ${typeof description === 'string' ? `a description longer than ${MAX_CATEGORY_DESCRIPTION} characters` : 'something other than a string'}`);
      if (seen.has(trimmed)) throw invalid(path, `names "${trimmed}" a second time`);
      seen.add(trimmed);
      return { name: trimmed, description: description.trim() || trimmed };
    });
  });
  // an object may name several categories: the bound is on categories, not on list items
  if (categories.length > MAX_CATEGORIES) {
    throw badRequest('validation_failed', `custom_categories names ${categories.length} categories; at most ${MAX_CATEGORIES}.`, [{ path: at, message: `${categories.length} categories; at most ${MAX_CATEGORIES}` }]);
  }
  return categories;
}

/** A catalogue ready to compare memories with: its categories and their embeddings, in order. */
interface EmbeddedCatalogue {
  categories: readonly Category[];
  vectors: Float32Array[];
}

/**
 * Gives a memory the categories of its catalogue closest to it in meaning: its embedding against
 * each category's name and description (embedded once per catalogue and kept), the best one when
 * it is at least `MIN_SIMILARITY` and those within `TIE` of it; none close enough gives `misc`
 * when the catalogue has it, else no category. Deterministic for a model; no language model is asked.
 */
export class Categorizer {
  private readonly catalogues = new Map<string, Promise<EmbeddedCatalogue>>();

  constructor(private readonly embedder: Embedder) {}

  /**
   * `catalogue` as a memory row stores it (`category_set`: JSON `Category[]`, null for the
   * default), which is also the key it is kept under: a row's catalogue is parsed and embedded
   * once, not per memory.
   */
  async categorize(vector: Float32Array, catalogue: string | null): Promise<string[]> {
    const { categories, vectors } = await this.embedded(catalogue);
    const scores = vectors.map((v) => dot(vector, v));
    const best = Math.max(...scores);
    if (best < MIN_SIMILARITY) return categories.some((c) => c.name === FALLBACK) ? [FALLBACK] : [];
    return categories.filter((_, i) => (scores[i] as number) >= best - TIE).map((c) => c.name);
  }

  private embedded(catalogue: string | null): Promise<EmbeddedCatalogue> {
    const key = catalogue ?? '';
    let found = this.catalogues.get(key);
    if (!found) {
      const categories = catalogue ? (JSON.parse(catalogue) as Category[]) : DEFAULT_CATEGORIES;
      found = this.embedder
        .embed(categories.map((c) => `${c.name.replace(/_/g, ' ')}: ${c.description}`), 'document')
        .then((vectors) => ({ categories, vectors }));
      // a failed embedding is asked again next time
      found.catch(() => this.catalogues.delete(key));
      if (this.catalogues.size >= CACHED_CATALOGUES) this.catalogues.delete(this.catalogues.keys().next().value as string);
      this.catalogues.set(key, found);
    }
    return found;
  }
}

/**
 * A read's filters with mem0's `categories` option (a list read or a search keeps the memories in
 * any of these categories) joined to them.
 */
export function withCategories(filters: unknown, categories: readonly string[] | undefined): unknown {
  if (!categories || categories.length === 0) return filters;
  const inAny = { categories: { in: categories } };
  const given = typeof filters === 'object' && filters !== null && Object.keys(filters).length > 0;
  return given ? { AND: [filters, inAny] } : inAny;
}

/** The categories a row holds (none before it was indexed). */
export function rowCategories(categories: string | null | undefined): string[] {
  return categories ? (JSON.parse(categories) as string[]) : [];
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(path: string, what: string) {
  return badRequest('validation_failed', `custom_categories${path.slice(path.indexOf('/', 1))} ${what}.`, [{ path, message: what }]);
}
