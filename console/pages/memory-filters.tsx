import { useState } from 'preact/hooks';
import type { ListBody } from '../api';

/** What the memories list route narrows by, besides the entity: categories, event dates and indexing status. */
export type MemoryFilters = Pick<ListBody, 'categories' | 'start_date' | 'end_date' | 'embedding_status'>;
type IndexingStatus = NonNullable<MemoryFilters['embedding_status']>;
const STATUSES: readonly IndexingStatus[] = ['pending', 'indexed', 'failed'];

/** Names separated by commas, as a list (none: undefined). */
export const namesOf = (text: string): string[] | undefined => {
  const names = text
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  return names.length > 0 ? names : undefined;
};

/** The filters form of an entity's memories; Apply sends them to the API (which checks them), Clear drops them. */
export function MemoryFiltersForm({ onApply }: { onApply: (filters: MemoryFilters) => void }) {
  const [categories, setCategories] = useState('');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [status, setStatus] = useState<IndexingStatus | ''>('');
  return (
    <form
      class="card filters"
      aria-labelledby="filters-title"
      onSubmit={(event) => {
        event.preventDefault();
        onApply({
          categories: namesOf(categories),
          start_date: from || undefined,
          end_date: to || undefined,
          embedding_status: status || undefined,
        });
      }}
      onReset={() => {
        setCategories('');
        setFrom('');
        setTo('');
        setStatus('');
        onApply({});
      }}
    >
      <h2 id="filters-title">Filter memories</h2>
      <div class="fields">
        <div class="grow">
          <label for="filter-categories">Categories (any of, comma-separated)</label>
          <input id="filter-categories" value={categories} onInput={(e) => setCategories(e.currentTarget.value)} />
        </div>
        <div>
          <label for="filter-from">Event time from</label>
          <input id="filter-from" type="date" value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
        </div>
        <div>
          <label for="filter-to">Event time to</label>
          <input id="filter-to" type="date" value={to} onInput={(e) => setTo(e.currentTarget.value)} />
        </div>
        <div>
          <label for="filter-status">Indexing status</label>
          <select id="filter-status" value={status} onChange={(e) => setStatus(e.currentTarget.value as IndexingStatus | '')}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <button type="submit">Apply filters</button>
        <button type="reset">Clear</button>
      </div>
    </form>
  );
}
