/**
 * The bounds of a category catalogue (mem0's `custom_categories`), in one place: the add's parser
 * checks them, its request schema states them, and the `memory.infer` payload that carries the
 * catalogue to a worker is validated against them.
 */

/** Most categories one add may name. */
export const MAX_CATEGORIES = 50;
/** Characters of a category's name. */
export const MAX_CATEGORY_NAME = 64;
/** Characters of a category's description. */
export const MAX_CATEGORY_DESCRIPTION = 500;
