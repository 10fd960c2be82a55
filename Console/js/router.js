// Hash routes: #/data/<namespace>/<path>, each key percent-encoded.

import { isValidKey, isValidNamespace } from './data.js';

export const DEFAULT_NAMESPACE = 'default';

/** The route in a URL fragment, or null when it is not a valid data route. */
function parseRoute(hash) {
  const match = /^#\/data\/([^/?]+)\/?([^?]*)/.exec(hash);
  if (!match) return null;
  try {
    const ns = decodeURIComponent(match[1]);
    const segs = match[2].split('/').filter(Boolean).map(decodeURIComponent);
    return isValidNamespace(ns) && segs.every(isValidKey) ? { ns, segs } : null;
  } catch {
    return null;
  }
}

export function routeHash(ns, segs) {
  return `#/data/${encodeURIComponent(ns)}/${segs.map(encodeURIComponent).join('/')}`;
}

/** Goes to a route, adding a history entry (so the back button returns). */
export function navigate(ns, segs) {
  const hash = routeHash(ns, segs);
  if (location.hash !== hash) location.hash = hash;
}

/** Calls `render(route)` now and on every change of the fragment; invalid fragments become the default route. */
export function startRouter(render) {
  const update = () => {
    const route = parseRoute(location.hash);
    if (route) return render(route);
    history.replaceState(history.state, '', routeHash(DEFAULT_NAMESPACE, []));
    update();
  };
  addEventListener('hashchange', update);
  update();
  return () => removeEventListener('hashchange', update);
}
