// Paths, keys and immutable operations on data in Firebase export format
// (a leaf with a priority is {".value": v, ".priority": p}; objects may carry ".priority").

/** "/a//b/" → ["a", "b"]; the root is []. */
export function splitPath(text) {
  return String(text).split('/').filter(Boolean);
}

export function pathString(segs) {
  return '/' + segs.join('/');
}

/** True when `a` is `b` or an ancestor of `b`. */
export function isPrefix(a, b) {
  return a.length <= b.length && a.every((key, i) => key === b[i]);
}

const FORBIDDEN_IN_KEY = /[.#$[\]/\u0000-\u001F\u007F]/;

export function isValidKey(key) {
  return key.length > 0 && !FORBIDDEN_IN_KEY.test(key) && new TextEncoder().encode(key).length <= 768;
}

export function isValidNamespace(name) {
  return /^[A-Za-z0-9_-]{1,63}$/.test(name);
}

function isObject(node) {
  return node !== null && typeof node === 'object';
}

export function isLeaf(node) {
  return node !== null && node !== undefined && (!isObject(node) || '.value' in node);
}

export function leafValue(node) {
  return isObject(node) && '.value' in node ? node['.value'] : node;
}

/** The [key, child] pairs of an object node (priorities left out). */
export function childEntries(node) {
  if (!isObject(node) || '.value' in node) return [];
  return Object.entries(node).filter(([key]) => key !== '.priority');
}

export function childAt(node, key) {
  return isObject(node) && !('.value' in node) && key !== '.priority' ? node[key] ?? null : null;
}

export function getAt(node, segs) {
  return segs.reduce((current, key) => childAt(current, key), node ?? null);
}

/** A node with no children left (or `{}`) is empty. */
function normalize(node) {
  if (!isObject(node) || '.value' in node) return node ?? null;
  return childEntries(node).length ? node : null;
}

/** Returns a copy of `node` with `value` at `segs`; untouched branches are shared. */
export function setAt(node, segs, value) {
  if (!segs.length) return normalize(value);
  const [key, ...rest] = segs;
  const copy = isObject(node) && !('.value' in node) ? { ...node } : {};
  const child = setAt(childAt(node, key), rest, value);
  if (child === null) delete copy[key];
  else copy[key] = child;
  return normalize(copy);
}

export function deepEqual(a, b) {
  if (a === b) return true;
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => key in b && deepEqual(a[key], b[key]));
}

const INTEGER_KEY = /^-?(0|[1-9][0-9]{0,9})$/;

function integerKey(key) {
  if (!INTEGER_KEY.test(key) || key === '-0') return null;
  const n = Number(key);
  return n >= -2147483648 && n <= 2147483647 ? n : null;
}

/** Firebase key order: integer-like keys numerically first, then the rest by UTF-16 code units. */
export function compareKeys(a, b) {
  const x = integerKey(a);
  const y = integerKey(b);
  if (x !== null && y !== null) return x - y;
  if (x !== null) return -1;
  if (y !== null) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function rank(value) {
  if (value === null || value === undefined) return 0;
  if (value === false) return 1;
  if (value === true) return 2;
  if (typeof value === 'number') return 3;
  if (typeof value === 'string') return 4;
  return 5;
}

/** Firebase value order: null, false, true, numbers, strings, objects. */
export function compareValues(a, b) {
  const x = leafValue(a);
  const y = leafValue(b);
  const difference = rank(x) - rank(y);
  if (difference || rank(x) < 3 || rank(x) > 4) return difference;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Parses what a user typed: JSON when it is JSON, otherwise the text as a string. */
export function parseInput(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Compact JSON of a node, cut to `max` characters, for labels and tooltips. */
export function preview(node, max = 80) {
  const text = node === null || node === undefined ? 'null' : JSON.stringify(isLeaf(node) ? leafValue(node) : node);
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}
