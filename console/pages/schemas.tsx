import { useState } from 'preact/hooks';
import { api, unwrap, type SchemaVersion } from '../api';
import { ErrorNote, Loading, PageTitle, Time, useLoaded } from '../components';
import { BASE, Link } from '../router';

export const schemasPath = () => `${BASE}/schemas`;
export const schemaPath = (name: string) => `${BASE}/schemas/${encodeURIComponent(name)}`;
export const recordPath = (schema: string, id: string) => `${schemaPath(schema)}/records/${encodeURIComponent(id)}`;

const PAGE_SIZE = 20;

/**
 * A page of `PAGE_SIZE` from a list paged by limit and offset, which answers no count: one more
 * is asked for, to know whether a next page exists.
 */
export async function pageOf<T>(page: number, load: (limit: number, offset: number) => Promise<T[]>): Promise<{ items: T[]; more: boolean }> {
  const items = await load(PAGE_SIZE + 1, (page - 1) * PAGE_SIZE);
  return { items: items.slice(0, PAGE_SIZE), more: items.length > PAGE_SIZE };
}

/** A table's header row: its columns' names, "#" after one whose values are numbers (aligned right). */
export function Head({ columns }: { columns: string[] }) {
  return (
    <thead>
      <tr>
        {columns.map((c) => (
          <th key={c} scope="col" class={c.endsWith('#') ? 'number' : undefined}>
            {c.replace(/#$/, '')}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/** A version's number, how many fields it has, its description and when it was published, as table cells. */
export function VersionCells({ version }: { version: SchemaVersion }) {
  return (
    <>
      <td class="number">{version.version}</td>
      <td class="number">{Object.keys(version.json_schema?.properties ?? {}).length}</td>
      <td>{version.description ?? <span class="muted">—</span>}</td>
      <td>
        <Time value={version.created_at} />
      </td>
    </>
  );
}

/** Previous and Next of a list whose length is not known. */
export function Pager({ page, more, onPage }: { page: number; more: boolean; onPage: (page: number) => void }) {
  if (page === 1 && !more) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span>Page {page}</span>
      <button type="button" disabled={!more} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}

/** The project's record schemas, newest first, each at its latest version. */
export function SchemasPage() {
  const [page, setPage] = useState(1);
  const { value, error } = useLoaded(
    () => pageOf(page, (limit, offset) => unwrap(api.GET('/v1/schemas', { params: { query: { limit, offset } } })).then((a) => a.schemas ?? [])),
    () => false,
    [page],
  );
  return (
    <>
      <PageTitle>Record schemas</PageTitle>
      <p class="muted">The typed memory's schemas, newest first, each at its latest version.</p>
      <ErrorNote error={error} />
      {value === null && error === null ? <Loading /> : null}
      {value !== null && value.items.length === 0 && page === 1 ? <p>No schemas yet: register one with POST /v1/schemas (a preset from /v1/schema-presets works unchanged).</p> : null}
      {value !== null && value.items.length > 0 ? (
        <table>
          <caption class="visually-hidden">Record schemas, page {page}</caption>
          <Head columns={['Schema', 'Latest version#', 'Fields#', 'Description', 'Published']} />
          <tbody>
            {value.items.map((s) => (
              <tr key={s.name}>
                <td>
                  <Link href={schemaPath(s.name ?? '')}>{s.name}</Link>
                </td>
                <VersionCells version={s} />
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {value !== null ? <Pager page={page} more={value.more} onPage={setPage} /> : null}
    </>
  );
}
