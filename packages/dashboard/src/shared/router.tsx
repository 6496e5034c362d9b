import { useEffect, useState, type AnchorHTMLAttributes, type MouseEvent } from 'react';

/** Every dashboard page lives under this path; the service answers index.html for any of them. */
export const BASE = '/dashboard';

/** The page part of the current location (`/`, `/jobs`, …). */
function currentPage(): string {
  const p = window.location.pathname;
  const rest = p.startsWith(BASE) ? p.slice(BASE.length) : p;
  return rest === '' ? '/' : rest;
}

/** The current page, following links and the back button (history API, no hash). */
export function usePage(): string {
  const [page, setPage] = useState(currentPage);
  useEffect(() => {
    const update = () => setPage(currentPage());
    window.addEventListener('popstate', update);
    return () => window.removeEventListener('popstate', update);
  }, []);
  return page;
}

export function navigate(page: string): void {
  window.history.pushState(null, '', BASE + (page === '/' ? '/' : page));
  window.dispatchEvent(new PopStateEvent('popstate'));
}

/** An in-app link: a real `<a href>` (keyboard, middle-click) that navigates without a reload. */
export function Link({ to, ...rest }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
  return <a href={BASE + (to === '/' ? '/' : to)} onClick={onClick} {...rest} />;
}
