// The namespace suggestions (<datalist id="namespaces">) from /.inspect/databases.json.

import { adminJSON } from './admin.js';
import { $, el } from './dom.js';

const FRESH_MS = 10000;
let fetched = 0;

/** Refills the list unless it was filled in the last few seconds; failures leave it as it was. */
export async function refreshNamespaces() {
  if (Date.now() - fetched < FRESH_MS) return;
  fetched = Date.now();
  try {
    const databases = await adminJSON('/.inspect/databases.json');
    const names = databases.map((database) => database.name).filter((name) => typeof name === 'string').sort();
    $('#namespaces').replaceChildren(...names.map((name) => el('option', { value: name })));
  } catch {
    fetched = 0;
  }
}
