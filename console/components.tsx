import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, ENTITY_TYPES, type EntityType } from './api';

/** A page's title; it takes the focus when the page opens, so keyboard and screen-reader users start there. */
export function PageTitle({ children }: { children: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    ref.current?.focus({ preventScroll: true });
  }, []);
  return (
    <h1 tabIndex={-1} ref={ref}>
      {children}
    </h1>
  );
}

/** A moment, in the reader's own time zone, with the exact UTC time as its machine-readable value. */
export function Time({ value }: { value: string | null | undefined }) {
  if (!value) return <span class="muted">—</span>;
  return (
    <time dateTime={value} title={value}>
      {new Date(value).toLocaleString()}
    </time>
  );
}

/** A memory's embedding status: pending until searchable, indexed, or failed. */
export function Status({ value }: { value: string | undefined }) {
  const status = value ?? 'unknown';
  return <span class={`status status-${status}`}>{status}</span>;
}

/** An error the API answered, or one of the network, as a message read out when it appears. */
export function ErrorNote({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  const text =
    error instanceof ApiError
      ? `${error.message}${error.retryAfter ? ` (try again in ${error.retryAfter} s)` : ''}`
      : error instanceof Error
        ? error.message
        : String(error);
  return (
    <p class="error" role="alert">
      {text}
    </p>
  );
}

export function Loading() {
  return (
    <p class="muted" role="status">
      Loading…
    </p>
  );
}

/**
 * A form's submission: runs `action` once at a time, with `busy` while it runs and the error it
 * ended with, if any.
 */
export function useSubmit(action: () => Promise<void>): { busy: boolean; error: unknown; submit: (event: Event) => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(null);
    action()
      .catch(setError)
      .finally(() => setBusy(false));
  };
  return { busy, error, submit };
}

/** A labelled choice of entity type (user, agent, app, run). */
export function EntityTypeField({ id, value, onChange }: { id: string; value: EntityType; onChange: (type: EntityType) => void }) {
  return (
    <div>
      <label for={id}>Entity type</label>
      <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value as EntityType)}>
        {ENTITY_TYPES.map((t) => (
          <option key={t} value={t}>
            {t}
          </option>
        ))}
      </select>
    </div>
  );
}

/** How often a page looks again while something on it is still being indexed. */
const REFRESH_MS = 1_000;

/**
 * What `load` answers, loaded again whenever `deps` change or `reload` is called, and every
 * second while `again` says it is still changing (a memory pending indexing).
 */
export function useLoaded<T>(load: () => Promise<T>, again: (value: T) => boolean, deps: unknown[]): { value: T | null; error: unknown; reload: () => void } {
  const [value, setValue] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [version, setVersion] = useState(0);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = () =>
      load()
        .then((loaded) => {
          if (!live) return;
          setValue(loaded);
          setError(null);
          if (again(loaded)) timer = setTimeout(run, REFRESH_MS);
        })
        .catch((err: unknown) => live && setError(err));
    void run();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [...deps, version]);
  return { value, error, reload: () => setVersion((v) => v + 1) };
}

/**
 * A destructive action asked twice: its button, then (in a group named `group`) the question, the
 * action for good and a way back. `name` is the first button's accessible name when its text
 * alone does not say what it acts on.
 */
export function ConfirmAction({ action, confirm, group, name, question, onConfirm }: { action: string; confirm: string; group: string; name?: string; question?: string; onConfirm: () => void }) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" class="destructive" aria-label={name} onClick={() => setAsking(true)}>
        {action}
      </button>
    );
  }
  return (
    <span role="group" aria-label={group}>
      {question ? `${question} ` : null}
      <button type="button" class="destructive" onClick={onConfirm}>
        {confirm}
      </button>{' '}
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
