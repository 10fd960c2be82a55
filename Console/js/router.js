// Hash routes: #/data/<namespace>/<path> (each key percent-encoded), #/rules (?line=N&column=C), #/requests,
// #/server.

import { isValidKey, isValidNamespace } from './data.js';

export const DEFAULT_NAMESPACE = 'default';

/** The route in a URL fragment: { view: 'data', ns, segs }, { view: 'rules', line, column }, { view } or null. */
function parseRoute(hash) {
  const other = /^#\/(rules|requests|server)\/?(?:\?(.*))?$/.exec(hash);
  if (other) {
    const route = { view: other[1] };
    const params = new URLSearchParams(other[2] ?? '');
    for (const name of ['line', 'column']) {
      const value = Number(params.get(name));
      if (route.view === 'rules' && Number.isInteger(value) && value > 0) route[name] = value;
    }
    return route;
  }
  return parseDataRoute(hash);
}

function parseDataRoute(hash) {
  const match = /^#\/data\/([^/?]+)\/?([^?]*)/.exec(hash);
  if (!match) return null;
  try {
    const ns = decodeURIComponent(match[1]);
    const segs = match[2].split('/').filter(Boolean).map(decodeURIComponent);
    return isValidNamespace(ns) && segs.every(isValidKey) ? { view: 'data', ns, segs } : null;
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
