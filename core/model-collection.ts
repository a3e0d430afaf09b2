import type { CollectionSpec } from '../contracts/vector-store.js';
import type { Embedder } from '../providers/embedder.js';

/**
 * The cosine collection that holds one purpose's vectors (`memories`, `knowledge`) for one
 * embedding model: `<purpose>_<model as a slug>`, so switching models never mixes dimensions.
 */
export async function modelCollection(embedder: Embedder, purpose: string, columns: CollectionSpec['columns']): Promise<CollectionSpec> {
  return {
    name: `${purpose}_${embedder.model.toLowerCase().replace(/[^a-z0-9]+/g, '_')}`.slice(0, 200),
    dimension: await embedder.dimension(),
    metric: 'cosine',
    columns,
  };
}
