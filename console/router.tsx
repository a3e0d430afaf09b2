import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

// A small router over the History API: every console page is a path under /console, which the
// server answers with the same page.

export const BASE = '/console';

export function navigate(to: string): void {
  history.pushState(null, '', to);
  dispatchEvent(new PopStateEvent('popstate'));
}

/** The current path and query, following links and the browser's back and forward. */
export function useLocation(): URL {
  const [href, setHref] = useState(location.href);
  useEffect(() => {
    const follow = () => setHref(location.href);
    addEventListener('popstate', follow);
    return () => removeEventListener('popstate', follow);
  }, []);
  return new URL(href);
}

/** A real link (it opens in a new tab too); a plain click moves within the page. */
export function Link({ href, children, class: className, current }: { href: string; children: ComponentChildren; class?: string; current?: boolean }) {
  return (
    <a
      href={href}
      class={className}
      aria-current={current ? 'page' : undefined}
      onClick={(event) => {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}

export const entityPath = (type: string, id: string) => `${BASE}/entities/${encodeURIComponent(type)}/${encodeURIComponent(id)}`;
export const memoryPath = (id: string) => `${BASE}/memories/${encodeURIComponent(id)}`;
export const searchPath = (type?: string, id?: string) =>
  type && id ? `${BASE}/search?${new URLSearchParams({ type, id }).toString()}` : `${BASE}/search`;
