import { useState } from 'preact/hooks';
import { api, unwrap, type Delivery, type Webhook } from '../api';
import { ErrorNote, Loading, PageTitle, Time, useLoaded } from '../components';

/** The project's webhooks (mem0's), each with its delivery log. */
export function WebhooksPage() {
  const hooks = useLoaded(
    async () => {
      // mem0's webhook paths name the project by id, which /v1/ping gives
      const { project_id } = await unwrap(api.GET('/v1/ping'));
      return unwrap(api.GET('/api/v1/webhooks/projects/{projectId}', { params: { path: { projectId: project_id ?? '' } } }));
    },
    () => false,
    [],
  );
  const [open, setOpen] = useState<string | null>(null);
  const list = hooks.value;
  const shown = list?.find((w) => w.webhook_id === open);

  return (
    <>
      <PageTitle>Webhooks</PageTitle>
      <p class="muted">
        Where the project's memory events are POSTed, signed with each webhook's secret (created through <code>POST /api/v1/webhooks/projects/&#123;project_id&#125;</code>).
      </p>
      <ErrorNote error={hooks.error} />
      {list === null && hooks.error === null ? <Loading /> : null}
      {list !== null && list.length === 0 ? <p>No webhooks yet.</p> : null}
      {list !== null && list.length > 0 ? (
        <table>
          <caption class="visually-hidden">Webhooks</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">URL</th>
              <th scope="col">Events</th>
              <th scope="col">Active</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span class="visually-hidden">Delivery log</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((w) => (
              <tr key={w.webhook_id}>
                <td>{w.name}</td>
                <td class="memory-text">
                  <code>{w.url}</code>
                </td>
                <td>{(w.event_types ?? []).join(', ')}</td>
                <td>{w.is_active ? 'yes' : 'no'}</td>
                <td>
                  <Time value={w.created_at} />
                </td>
                <td>
                  <button type="button" aria-pressed={open === w.webhook_id} onClick={() => setOpen(open === w.webhook_id ? null : (w.webhook_id ?? null))}>
                    Deliveries<span class="visually-hidden"> of {w.name}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {shown ? <Deliveries key={shown.webhook_id} webhook={shown} /> : null}
    </>
  );
}

/** A webhook's deliveries, newest first, looked at again every second while one is pending. */
function Deliveries({ webhook }: { webhook: Webhook }) {
  const log = useLoaded<Delivery[]>(
    async () =>
      (await unwrap(api.GET('/api/v1/webhooks/{id}/deliveries', { params: { path: { id: webhook.webhook_id ?? '' }, query: { limit: 50 } } }))).results ?? [],
    (rows) => rows.some((d) => d.status === 'pending'),
    [webhook.webhook_id],
  );
  return (
    <section aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries of {webhook.name}</h2>
      <ErrorNote error={log.error} />
      {log.value === null && log.error === null ? <Loading /> : null}
      {log.value !== null && log.value.length === 0 ? <p>Nothing sent yet.</p> : null}
      {log.value !== null && log.value.length > 0 ? (
        <table>
          <caption class="visually-hidden">Deliveries of {webhook.name}</caption>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Memory</th>
              <th scope="col">Status</th>
              <th scope="col" class="number">
                Attempts
              </th>
              <th scope="col">Answer</th>
              <th scope="col">Last change</th>
            </tr>
          </thead>
          <tbody>
            {log.value.map((d) => (
              <tr key={d.id}>
                <td>{d.event}</td>
                <td>
                  <code>{d.memory_id}</code>
                </td>
                <td>
                  <span class={`status status-${d.status === 'delivered' ? 'indexed' : (d.status ?? 'pending')}`}>{d.status}</span>
                </td>
                <td class="number">{d.attempts}</td>
                <td>
                  {d.status_code ?? '—'}
                  {d.last_error ? <span class="error"> {d.last_error}</span> : null}
                </td>
                <td>
                  <Time value={d.updated_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
