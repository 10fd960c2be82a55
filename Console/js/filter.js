// The child filter form → a wire query (data-model §8, wire-protocol §7).

import { isValidKey, parseInput, splitPath } from './data.js';

/**
 * Reads the form. Returns { error } or { query, index }: `query` is the wire query object when the filter
 * has a range or a limit (such listens are tagged), else null; `index` is what the children are ordered by.
 */
export function readFilter(form) {
  const field = (name) => form.elements[name].value.trim();
  const order = field('orderBy');
  let index;
  if (order === 'key') index = '.key';
  else if (order === 'value') index = '.value';
  else if (order === 'child') {
    index = splitPath(field('child')).join('/');
    if (!index || !index.split('/').every(isValidKey)) return { error: 'Enter the name (or path) of the child to order by.' };
  }
  // Key bounds are always strings; other bounds are JSON when they parse as JSON.
  const bound = (text) => (index === '.key' ? String(parseInput(text)) : parseInput(text));
  const query = {};
  if (field('equalTo')) {
    if (field('startAt') || field('endAt')) return { error: 'Use either equalTo or startAt/endAt.' };
    query.sp = query.ep = bound(field('equalTo'));
  } else {
    if (field('startAt')) query.sp = bound(field('startAt'));
    if (field('endAt')) query.ep = bound(field('endAt'));
  }
  const first = field('limitToFirst');
  const last = field('limitToLast');
  if (first && last) return { error: 'Use either limitToFirst or limitToLast.' };
  if (first || last) {
    const limit = Number(first || last);
    if (!Number.isInteger(limit) || limit < 1) return { error: 'A limit is a whole number of at least 1.' };
    query.l = limit;
    query.vf = first ? 'l' : 'r';
  }
  if (!Object.keys(query).length) return { query: null, index };
  if (index) query.i = index;
  return { query, index };
}
