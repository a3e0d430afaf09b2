import { useEffect, useState } from 'preact/hooks';
import { api, unwrap, type OperationRow, type OperationsView } from '../api';
import { ErrorNote, Loading, PageTitle, Time } from '../components';
import { memoryPath, Link } from '../router';

/** How often the page looks again, and how many of its looks the charts keep (three minutes). */
const POLL_MS = 2_000;
const SAMPLES = 90;

/** One look: when, how many jobs the queues held, how many memories and documents were done. */
interface Sample {
  at: number;
  depth: number;
  done: number;
}

/** The background work: queue depths and the indexing rate over the last minutes, pending and failed rows with their reasons. */
export function OperationsPage() {
  const [view, setView] = useState<OperationsView | null>(null);
  const [samples, setSamples] = useState<Sample[]>([]);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const look = () =>
      unwrap(api.GET('/v1/operations'))
        .then((answer) => {
          if (!live) return;
          setView(answer);
          setError(null);
          const sample = {
            at: Date.now(),
            depth: answer.queues.reduce((sum, q) => sum + q.waiting + q.active + q.delayed, 0),
            done: answer.memories.indexed + answer.documents.ready,
          };
          setSamples((kept) => [...kept, sample].slice(-SAMPLES));
        })
        .catch((err: unknown) => live && setError(err))
        .finally(() => {
          if (live) timer = setTimeout(look, POLL_MS);
        });
    void look();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, []);

  // per minute, between one look and the next (a deletion can lower the count: never below 0)
  const rates = samples.slice(1).map((s, i) => {
    const before = samples[i] as Sample;
    return { at: s.at, value: Math.max(0, ((s.done - before.done) * 60_000) / Math.max(1, s.at - before.at)) };
  });

  return (
    <>
      <PageTitle>Operations</PageTitle>
      <p class="muted">
        The background work, looked at every {POLL_MS / 1000} seconds while this page is open. The queues are the server's, shared by every project; the{' '}
        <a href="/admin/queues">queue board</a> (operator sign-in) shows their jobs.
      </p>
      <ErrorNote error={error} />
      {view === null && error === null ? <Loading /> : null}
      {view ? (
        <>
          <div class="counts">
            <Count label="Memories pending" value={view.memories.pending} />
            <Count label="Memories failed" value={view.memories.failed} />
            <Count label="Documents pending" value={view.documents.uploaded + view.documents.processing} />
            <Count label="Documents failed" value={view.documents.failed} />
          </div>
          <div class="charts">
            <Chart title="Jobs in the queues" unit="jobs" points={samples.map((s) => ({ at: s.at, value: s.depth }))} />
            <Chart title="Indexed per minute" unit="per minute" points={rates} />
          </div>
          <h2 id="queues-title">Queues</h2>
          <table aria-labelledby="queues-title">
            <thead>
              <tr>
                <th scope="col">Queue</th>
                {(['waiting', 'active', 'delayed', 'failed', 'completed'] as const).map((state) => (
                  <th key={state} scope="col" class="number">
                    {state}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {view.queues.map((q) => (
                <tr key={q.queue}>
                  <td>{q.queue}</td>
                  <td class="number">{q.waiting}</td>
                  <td class="number">{q.active}</td>
                  <td class="number">{q.delayed}</td>
                  <td class="number">{q.failed}</td>
                  <td class="number">{q.completed}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <Rows title="Pending" rows={view.pending} empty="Nothing is waiting." />
          <Rows title="Failed" rows={view.failed} empty="Nothing has failed." />
        </>
      ) : null}
    </>
  );
}

function Count({ label, value }: { label: string; value: number }) {
  return (
    <div class="count card">
      <span class="count-value">{value}</span> <span class="muted">{label}</span>
    </div>
  );
}

/** A small line chart in inline SVG; its label reads out the latest value and the highest. */
function Chart({ title, unit, points }: { title: string; unit: string; points: Array<{ at: number; value: number }> }) {
  const width = 320;
  const height = 100;
  const top = Math.max(1, ...points.map((p) => p.value));
  const first = points[0]?.at ?? 0;
  const span = Math.max(1, (points[points.length - 1]?.at ?? 0) - first);
  const line = points.map((p) => `${(((p.at - first) / span) * width).toFixed(1)},${(height - (p.value / top) * (height - 4) - 2).toFixed(1)}`).join(' ');
  const latest = points[points.length - 1]?.value;
  const said = latest === undefined ? `${title}: no samples yet` : `${title}: now ${Math.round(latest)} ${unit}, at most ${Math.round(top)} over the last ${Math.round(span / 1000)} seconds`;
  return (
    <figure class="chart card">
      <figcaption>
        {title}: <strong>{latest === undefined ? '—' : Math.round(latest)}</strong> <span class="muted">{unit}</span>
      </figcaption>
      <svg viewBox={`0 0 ${width} ${height}`} width={width} height={height} role="img" aria-label={said}>
        <line x1="0" y1={height - 1} x2={width} y2={height - 1} class="axis" />
        {points.length > 1 ? <polyline points={line} class="series" /> : null}
      </svg>
      <span class="muted small">max {Math.round(top)}</span>
    </figure>
  );
}

function Rows({ title, rows, empty }: { title: string; rows: OperationRow[]; empty: string }) {
  const id = `rows-${title.toLowerCase()}`;
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {rows.length === 0 ? <p>{empty}</p> : null}
      {rows.length > 0 ? (
        <table>
          <caption class="visually-hidden">{title} memories and documents</caption>
          <thead>
            <tr>
              <th scope="col">Kind</th>
              <th scope="col">What</th>
              <th scope="col">Status</th>
              <th scope="col">Reason</th>
              <th scope="col">Last change</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={`${r.kind}:${r.id}`}>
                <td>{r.kind}</td>
                <td class="memory-text">
                  {r.kind === 'memory' ? <Link href={memoryPath(r.id)}>{r.label}</Link> : r.label}
                  {r.knowledge_base ? <span class="muted"> in {r.knowledge_base}</span> : null}
                </td>
                <td>
                  <span class={`status status-${r.status === 'failed' ? 'failed' : 'pending'}`}>{r.status}</span>
                </td>
                <td>{r.error ?? <span class="muted">—</span>}</td>
                <td>
                  <Time value={r.updated_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
