// The admin endpoints (`/.settings/…`, `/.inspect/…`), with the credential of session.js.

import { getToken, serverOrigin } from './session.js';

let onUnauthorized = () => {};

/** `handler(message)` runs when the server refuses the credential (401). */
export function setUnauthorizedHandler(handler) {
  onUnauthorized = handler;
}

/**
 * One admin request. Resolves { status, ok, text, json } whatever the status (json is null when the body is not
 * JSON); rejects only when the server cannot be reached.
 */
export async function adminRequest(method, path, { params = {}, body } = {}) {
  const url = new URL(path, serverOrigin);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  const headers = { Authorization: `Bearer ${getToken()}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(url, { method, headers, body, cache: 'no-store' });
  const text = await response.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON
  }
  const answer = { status: response.status, ok: response.ok, text, json };
  if (answer.status === 401) onUnauthorized(answerMessage(answer));
  return answer;
}

/** GET of a JSON admin endpoint; throws an Error with the server's message unless it answers 2xx. */
export async function adminJSON(path, options) {
  const answer = await adminRequest('GET', path, options);
  if (!answer.ok) throw new Error(answerMessage(answer));
  return answer.json;
}

/** "400 the server's error text" for an answer that is not 2xx. */
export function answerMessage({ status, json, text }) {
  const message = json && typeof json === 'object' && typeof json.error === 'string' ? json.error : text;
  return `${status} ${message}`.trim();
}

/** The URL of the rule evaluations stream; EventSource sends no headers, so the credential goes in `auth`. */
export function evaluationsURL() {
  const url = new URL('/.inspect/evaluations', serverOrigin);
  url.searchParams.set('auth', getToken() ?? '');
  return url.href;
}
