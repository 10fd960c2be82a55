// The REST API (`/<path>.json?ns=…`), for import, export and one-off reads.

import { getToken, serverOrigin } from './session.js';

async function request(method, ns, segs, { params = {}, body } = {}) {
  const url = new URL(`/${segs.map(encodeURIComponent).join('/')}.json`, serverOrigin);
  url.searchParams.set('ns', ns);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  const headers = { Authorization: `Bearer ${getToken()}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(url, { method, headers, body });
  const text = await response.text();
  if (!response.ok) {
    let message = text;
    try {
      message = JSON.parse(text).error ?? text;
    } catch {
      // not JSON: keep the raw text
    }
    throw new Error(`${response.status} ${message || response.statusText}`);
  }
  return text;
}

/** The node's JSON text with priorities (`format=export`). */
export function exportText(ns, segs) {
  return request('GET', ns, segs, { params: { format: 'export' } });
}

/** The node's value (with priorities), parsed. */
export async function readExport(ns, segs) {
  return JSON.parse(await exportText(ns, segs));
}

/** Replaces the node with the given JSON text. */
export function putText(ns, segs, text) {
  return request('PUT', ns, segs, { body: text, params: { print: 'silent' } });
}
