// The admin credential (kept in sessionStorage) and the server the console talks to.

const TOKEN_KEY = 'canopy.token';

/** Moves a `token=…` from the URL fragment into sessionStorage and drops it from the URL; true if there was one. */
export function captureToken() {
  const hash = location.hash;
  const match = /(^#|[&?])token=([^&]*)/.exec(hash);
  if (!match) return false;
  sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[2]));
  const rest = (hash.slice(0, match.index) + (match[1] === '#' ? '#' : '') + hash.slice(match.index + match[0].length))
    .replace(/^#&/, '#')
    .replace('?&', '?')
    .replace(/[?&]$/, '');
  history.replaceState(history.state, '', location.pathname + location.search + (rest === '#' ? '' : rest));
  return true;
}

export function getToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function clearToken() {
  sessionStorage.removeItem(TOKEN_KEY);
}

/** For development only: `?server=http://127.0.0.1:PORT` points the console at another loopback server. */
function devServer() {
  const value = new URLSearchParams(location.search).get('server');
  if (!value) return null;
  try {
    const url = new URL(value);
    const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
    return loopback && /^https?:$/.test(url.protocol) ? url.origin : null;
  } catch {
    return null;
  }
}

/** The origin of the REST API and of `/.ws`; the page's own origin unless overridden for development. */
export const serverOrigin = devServer() ?? location.origin;
export const isDevServer = serverOrigin !== location.origin;
