// The live tree: the node at the path bar's path and its children, level by level. The root and every
// expanded child have their own listen on the page's one socket (collapsing unlistens). Rows whose value
// changes after a level has loaded flash: added, changed (tooltip "old → new") or removed.

import {
  childAt, childEntries, compareKeys, compareValues, deepEqual, getAt, isLeaf, leafValue, parseInput,
  pathString, preview, splitPath,
} from './data.js';
import { el } from './dom.js';
import { routeHash } from './router.js';

const PAGE_SIZE = 50;
const FLASH_MS = 3000;
const FADE_MS = 1500;

export class Tree {
  /**
   * `segs`: path of the root node. `query`: wire query of a filter with a range or limit (or null).
   * `index`: ".key", ".value" or a child path to sort the root's children by (key order otherwise).
   * `actions`: { set(segs, value), add(segs), move(segs), remove(segs), report(error) }.
   */
  constructor(container, { wire, ns, segs, query = null, index, actions }) {
    this.wire = wire;
    this.ns = ns;
    this.actions = actions;
    this.root = new Row(this, segs, null, Boolean(query));
    container.replaceChildren(el('ul', { className: 'tree' }, this.root.element));
    this.root.expand(query, index);
  }

  destroy() {
    this.root.destroy();
  }
}

class Row {
  /** `level`: the Level listing this row (none for the root); `filtered`: the root's children are a query's. */
  constructor(tree, segs, level, filtered = false) {
    this.tree = tree;
    this.segs = segs;
    this.isRoot = !level;
    this.filtered = filtered;
    this.path = pathString(segs);
    this.value = undefined;
    this.unlisten = null;
    this.editing = null;
    this.build(segs.at(-1) ?? '/');
    this.render(undefined);
  }

  build(key) {
    const path = this.path;
    const button = (className, label, text, onclick) =>
      el('button', { type: 'button', className, 'aria-label': label, title: label, onclick }, text);
    this.toggle = el('button', {
      type: 'button', className: 'toggle', 'aria-label': path, 'aria-expanded': 'false',
      onclick: () => (this.unlisten ? this.collapse() : this.expand()),
    }, el('span', { className: 'arrow', 'aria-hidden': 'true' }), key);
    this.keyLabel = el('span', { className: 'key' }, this.isRoot ? path : key);
    this.valueButton = el('button', { type: 'button', className: 'value', onclick: () => this.startEdit() });
    this.summary = el('span', { className: 'summary' });
    this.error = el('span', { className: 'row-error' });
    this.openLink = el('a', {
      className: 'action', href: routeHash(this.tree.ns, this.segs), 'aria-label': `Open ${path}`, title: `Open ${path}`,
    }, '↗');
    this.addButton = button('action', `Add child to ${path}`, '+', () => this.tree.actions.add(this.segs));
    this.moveButton = button('action', `Move or rename ${path}`, '⇄', () => this.tree.actions.move(this.segs));
    this.deleteButton = button('action danger', `Delete ${path}`, '✕', () => this.tree.actions.remove(this.segs));
    const label = this.isRoot ? [this.keyLabel] : [this.toggle, this.keyLabel];
    this.line = el('div', { className: 'line' },
      ...label, el('span', { className: 'colon' }, ':'), this.valueButton, this.summary, this.error,
      el('span', { className: 'actions' }, this.openLink, this.addButton, this.moveButton, this.deleteButton));
    this.element = el('li', { className: this.isRoot ? 'row root' : 'row', 'data-path': path }, this.line);
  }

  /** Shows `value` (export format; undefined while unknown). */
  render(value) {
    this.value = value;
    const leaf = isLeaf(value);
    const empty = value === null || value === undefined;
    const object = !leaf && !empty;
    if (!this.isRoot) {
      this.toggle.hidden = !object;
      this.keyLabel.hidden = object;
    }
    if (!leaf && this.editing) this.endEdit(false);
    this.valueButton.hidden = !leaf || Boolean(this.editing);
    this.summary.hidden = leaf;
    if (leaf) {
      this.valueButton.textContent = JSON.stringify(leafValue(value));
      this.valueButton.setAttribute('aria-label', `Edit ${this.path}: ${preview(value, 60)}`);
    } else {
      const count = childEntries(value).length;
      const children = `{${count} ${count === 1 ? 'child' : 'children'}}${this.filtered ? ' (filtered)' : ''}`;
      this.summary.textContent = value === undefined ? 'loading…' : empty ? 'null' : children;
    }
    this.openLink.hidden = !object || this.isRoot;
    this.addButton.hidden = leaf;
    this.moveButton.hidden = empty || !this.segs.length;
    this.deleteButton.hidden = empty;
    if (!object && this.unlisten && !this.isRoot) this.collapse();
  }

  /** Listens to this node and lists its children (`query` and `index` are for the root only). */
  expand(query = null, index = undefined) {
    if (this.unlisten) return;
    this.children = el('ul', { className: 'children', 'aria-busy': 'true' });
    this.element.append(this.children);
    this.level = new Level(this, index);
    if (this.value !== undefined) this.level.update(this.value, false); // the parent's copy, until ours arrives
    this.toggle.setAttribute('aria-expanded', 'true');
    let loaded = false;
    this.unlisten = this.tree.wire.listen(this.segs, query, (listen) => {
      if (listen.error) {
        loaded = false;
        return this.showListenError(listen.error);
      }
      this.error.textContent = '';
      this.element.classList.remove('denied');
      if (this.isRoot) this.renderRoot(listen.data, loaded);
      this.level.update(listen.data, loaded);
      loaded = listen.complete;
      if (loaded) this.children.removeAttribute('aria-busy');
    });
  }

  /** The server refused or revoked this row's listen: a read the rules deny shows "no read access", not the data. */
  showListenError(error) {
    const denied = error.startsWith('permission_denied');
    this.error.textContent = denied ? 'no read access' : error;
    if (!denied) return;
    this.element.classList.add('denied');
    this.level.update(null, false);
    this.children.removeAttribute('aria-busy');
    if (this.isRoot) {
      this.valueButton.hidden = true;
      this.summary.hidden = true;
    }
  }

  renderRoot(value, highlight) {
    const before = this.value;
    if (highlight && isLeaf(before) && isLeaf(value) && !deepEqual(before, value)) {
      this.flash('changed', `${preview(before)} → ${preview(value)}`);
    }
    this.render(value);
  }

  collapse() {
    if (!this.unlisten) return;
    this.unlisten();
    this.unlisten = null;
    this.level.destroy();
    this.level = null;
    this.children.remove();
    this.toggle.setAttribute('aria-expanded', 'false');
  }

  destroy() {
    this.collapse();
    clearTimeout(this.flashTimer);
    clearTimeout(this.fadeTimer);
    this.element.remove();
  }

  flash(kind, title) {
    this.element.classList.remove('added', 'changed');
    void this.element.offsetWidth; // restart the animation
    this.element.classList.add(kind);
    if (title) this.line.title = title;
    clearTimeout(this.flashTimer);
    this.flashTimer = setTimeout(() => this.element.classList.remove(kind), FLASH_MS);
  }

  /** Marks the row removed, then calls `done` once it has faded. */
  fadeOut(done) {
    this.collapse();
    this.endEdit(false);
    this.element.classList.remove('added', 'changed');
    this.element.classList.add('removed');
    this.element.inert = true;
    this.fadeTimer = setTimeout(done, FADE_MS);
  }

  get fading() {
    return this.element.classList.contains('removed');
  }

  cancelFade() {
    clearTimeout(this.fadeTimer);
    this.element.classList.remove('removed');
    this.element.inert = false;
  }

  // -- inline editing of a leaf ---------------------------------------------------------------------

  startEdit() {
    if (this.editing || !isLeaf(this.value)) return;
    const input = el('input', {
      className: 'edit', type: 'text', value: JSON.stringify(leafValue(this.value)),
      'aria-label': `New value for ${this.path} (JSON or text; Enter saves, Escape cancels)`,
    });
    input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') {
        event.preventDefault();
        this.commitEdit();
      } else if (event.key === 'Escape') {
        event.preventDefault();
        event.stopPropagation();
        this.endEdit(true);
      }
    });
    input.addEventListener('blur', () => this.endEdit(false));
    this.editing = input;
    this.valueButton.hidden = true;
    this.valueButton.after(input);
    input.focus();
    input.select();
  }

  async commitEdit() {
    const value = parseInput(this.editing.value);
    this.endEdit(true);
    try {
      await this.tree.actions.set(this.segs, value);
    } catch (error) {
      this.tree.actions.report(error);
    }
  }

  endEdit(refocus) {
    const input = this.editing;
    if (!input) return;
    this.editing = null;
    input.remove();
    this.valueButton.hidden = !isLeaf(this.value);
    if (refocus && !this.valueButton.hidden) this.valueButton.focus();
  }
}

/** The children of one row, sorted, at most PAGE_SIZE more per "Load more". */
class Level {
  constructor(row, index) {
    this.row = row;
    this.list = row.children;
    this.rows = new Map();
    this.limit = PAGE_SIZE;
    this.node = null;
    this.compare = comparator(index);
    this.moreButton = el('button', {
      type: 'button', className: 'more',
      onclick: () => {
        this.limit += PAGE_SIZE;
        this.update(this.node, false);
      },
    });
    this.moreItem = el('li', { className: 'more-item', hidden: true }, this.moreButton);
  }

  update(node, highlight) {
    const before = this.node;
    this.node = node;
    const entries = childEntries(node).sort(this.compare);
    const shown = entries.slice(0, this.limit);
    const shownKeys = new Set(shown.map(([key]) => key));
    for (const [key, row] of this.rows) {
      if (shownKeys.has(key) || row.fading) continue;
      if (highlight && childAt(node, key) === null) row.fadeOut(() => this.drop(key, row));
      else this.drop(key, row);
    }
    let previous = null;
    for (const [key, value] of shown) {
      let row = this.rows.get(key);
      if (row?.fading) {
        row.cancelFade();
        row.render(value);
        if (highlight) row.flash('added');
      } else if (!row) {
        row = new Row(this.row.tree, [...this.row.segs, key], this);
        this.rows.set(key, row);
        row.render(value);
        if (highlight && childAt(before, key) === null) row.flash('added');
      } else if (!deepEqual(row.value, value)) {
        const old = row.value;
        row.render(value);
        if (highlight) row.flash('changed', `${preview(old)} → ${preview(value)}`);
      }
      // Sorted order; rows fading out keep their place.
      let next = previous ? previous.nextSibling : this.list.firstChild;
      while (next && next !== row.element && next.classList.contains('removed')) next = next.nextSibling;
      if (next !== row.element) this.list.insertBefore(row.element, next);
      previous = row.element;
    }
    const hidden = entries.length - shown.length;
    this.moreItem.hidden = hidden <= 0;
    this.moreButton.textContent = `Load more (${hidden} more)`;
    this.moreButton.setAttribute('aria-label', `Load more children of ${this.row.path} (${hidden} more)`);
    this.list.append(this.moreItem);
  }

  drop(key, row) {
    if (this.rows.get(key) === row) this.rows.delete(key);
    row.destroy();
  }

  destroy() {
    for (const row of this.rows.values()) row.destroy();
    this.rows.clear();
  }
}

/** Orders [key, value] entries by the query's index, ties (and the default) by key. */
function comparator(index) {
  const byKey = (a, b) => compareKeys(a[0], b[0]);
  if (!index || index === '.key') return byKey;
  const sortValue = index === '.value' ? (node) => node : (node) => getAt(node, splitPath(index));
  return (a, b) => compareValues(sortValue(a[1]), sortValue(b[1])) || byKey(a, b);
}
