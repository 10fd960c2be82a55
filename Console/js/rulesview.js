// The rules view (#/rules): an editor of the rules text with line numbers, publishing with errors at their
// line:column, a coverage heat-map of the rules in force in the gutter, and the simulator beside it.

import { adminRequest, answerMessage } from './admin.js';
import { confirmAction } from './dialogs.js';
import { $, el } from './dom.js';
import { findRule, offsetAt, parseRules, positionMapper } from './rulesjson.js';
import { Simulator } from './simulator.js';

const COVERAGE_MS = 3000;

export class RulesView {
  /** `namespace()`: the namespace whose rules are edited and simulated (the data view's). */
  constructor({ namespace }) {
    this.namespace = namespace;
    this.loadedNamespace = null; // the namespace whose rules the editor holds
    this.text = $('#rules-text');
    this.gutter = $('#rules-gutter');
    this.band = $('#rules-band');
    this.status = $('#rules-status');
    this.published = null; // the text in force, as last loaded or published
    this.diagnostics = []; // [{ line, column, rule, message }] in the editor's text
    this.coverage = [];
    this.target = null; // the line highlighted by a link
    this.timer = null;
    this.open = false;
    this.simulator = new Simulator({ view: this, namespace });

    this.text.addEventListener('input', () => {
      this.target = null;
      if (this.status.textContent === 'Published') this.setStatus('');
      this.scheduleGutter();
    });
    this.text.addEventListener('scroll', () => this.syncScroll());
    this.text.addEventListener('keydown', (event) => {
      if ((event.ctrlKey || event.metaKey) && event.key === 's') {
        event.preventDefault();
        this.publish();
      }
    });
    $('#rules-publish').addEventListener('click', () => this.publish());
    $('#rules-reload').addEventListener('click', async () => {
      if (this.dirty() && !(await confirmAction({
        title: 'Discard your edits?',
        message: 'Replace the editor\'s text with the rules in force? Your edits are lost.',
        confirmLabel: 'Discard edits',
      }))) return;
      this.load();
    });
    const toggle = $('#coverage-toggle');
    toggle.addEventListener('click', () => {
      const open = toggle.getAttribute('aria-expanded') !== 'true';
      toggle.setAttribute('aria-expanded', String(open));
      $('#coverage-box').hidden = !open;
    });
  }

  /** Shows the view; `route.line` (and `column`) moves the caret there. */
  async show(route) {
    const wasOpen = this.open;
    this.open = true;
    if (!wasOpen) {
      this.simulator.show();
      this.timer = setInterval(() => this.refreshCoverage(), COVERAGE_MS);
      // Unedited text follows the server; edits in progress are kept.
      if (this.published === null || !this.dirty() || this.loadedNamespace !== this.namespace()) await this.load();
      else this.refreshCoverage();
    }
    if (this.open && route.line) {
      // A link's line is in the published text; edits in progress may have moved the rule.
      const at = { line: route.line, column: route.column ?? 1 };
      this.goTo(this.placer(this.published)(at) ?? at);
    }
  }

  hide() {
    this.open = false;
    clearInterval(this.timer);
    this.timer = null;
  }

  dirty() {
    return this.published !== null && this.text.value !== this.published;
  }

  setStatus(text, isError = false) {
    this.status.textContent = text;
    this.status.classList.toggle('error', isError);
  }

  // -- loading and publishing ---------------------------------------------------------------------

  async load() {
    try {
      const ns = this.namespace();
      const answer = await adminRequest('GET', '/.settings/rules.json', { params: { ns } });
      if (!answer.ok) return this.setStatus(`Could not load the rules: ${answerMessage(answer)}`, true);
      this.loadedNamespace = ns;
      $('#rules-title').textContent = `Security rules of ${ns}`;
      this.published = answer.text;
      this.text.value = answer.text;
      this.text.scrollTop = 0;
      this.setDiagnostics([]);
      this.setStatus('');
      this.target = null;
      this.renderGutter();
      this.refreshCoverage();
    } catch (error) {
      this.setStatus(`Could not load the rules: ${error.message}`, true);
    }
  }

  async publish() {
    const text = this.text.value;
    this.setStatus('Publishing…');
    try {
      const answer = await adminRequest('PUT', '/.settings/rules.json', { params: { ns: this.loadedNamespace ?? this.namespace() }, body: text });
      if (answer.ok) {
        this.published = text;
        this.setDiagnostics([]);
        this.setStatus('Published');
        this.coverage = [];
        this.renderGutter();
        this.refreshCoverage();
      } else if (answer.status === 400 && Array.isArray(answer.json?.diagnostics)) {
        this.showServerDiagnostics(answer.json, text);
        const count = this.diagnostics.length;
        this.setStatus(`Not published: ${count} ${count === 1 ? 'error' : 'errors'}.`, true);
      } else {
        this.setStatus(`Not published: ${answerMessage(answer)}`, true);
      }
    } catch (error) {
      this.setStatus(`Not published: ${error.message}`, true);
    }
  }

  // -- positions ----------------------------------------------------------------------------------

  /**
   * A function giving the editor's place of a position the server reported about `sourceText` (the text it
   * compiled), found again by the rule's path when the texts differ; null when the rule is not in the editor.
   */
  placer(sourceText) {
    const editor = this.text.value;
    const map = positionMapper(sourceText ?? editor, editor);
    return ({ line, column, rule }) => {
      if (line) {
        const place = map(line, column ?? 1);
        if (place) return place;
      }
      return rule ? findRule(editor, rule) : null;
    };
  }

  /** Diagnostics of a 400 answer about `sourceText`, shown at their places in the editor. */
  showServerDiagnostics(answer, sourceText) {
    const place = this.placer(sourceText);
    const list = answer.diagnostics.length ? answer.diagnostics : [{ message: answer.error ?? 'The rules do not load.' }];
    this.setDiagnostics(list.map((diagnostic) => {
      const at = diagnostic.line || diagnostic.rule ? place(diagnostic) : null;
      return { ...diagnostic, line: at?.line ?? null, column: at?.column ?? null };
    }));
  }

  /** Parses the editor's text; on a syntax error shows it as a diagnostic and returns null. */
  parsedText() {
    try {
      return parseRules(this.text.value).value;
    } catch (error) {
      this.setDiagnostics([{ line: error.line, column: error.column, rule: '', message: `not valid JSON: ${error.message}` }]);
      return null;
    }
  }

  setDiagnostics(list) {
    this.diagnostics = list;
    const items = list.map((diagnostic) => {
      const where = diagnostic.line ? `Line ${diagnostic.line}, column ${diagnostic.column}: ` : '';
      const rule = diagnostic.rule ? ` (at ${diagnostic.rule})` : '';
      const text = `${where}${diagnostic.message}${rule}`;
      const content = diagnostic.line
        ? el('button', { type: 'button', className: 'link', onclick: () => this.goTo(diagnostic) }, text)
        : el('span', {}, text);
      return el('li', {}, content);
    });
    $('#rules-errors').replaceChildren(...items);
    $('#rules-errors-box').hidden = !list.length;
    this.renderGutter();
  }

  /** Puts the caret at a line and column of the editor, scrolls there and highlights the line. */
  goTo({ line, column = 1 }) {
    const text = this.text;
    const offset = offsetAt(text.value, line, column);
    text.focus({ preventScroll: true });
    text.setSelectionRange(offset, offset);
    const lineHeight = parseFloat(getComputedStyle(text).lineHeight) || 20;
    text.scrollTop = Math.max(0, (line - 1) * lineHeight - text.clientHeight / 3);
    this.target = line;
    this.renderGutter();
  }

  // -- gutter -------------------------------------------------------------------------------------

  scheduleGutter() {
    if (this.gutterFrame) return;
    this.gutterFrame = requestAnimationFrame(() => {
      this.gutterFrame = null;
      this.renderGutter();
    });
  }

  /** Line numbers, with errors, coverage and the highlighted line marked. */
  renderGutter() {
    const count = this.text.value.split('\n').length;
    const errors = new Map();
    for (const diagnostic of this.diagnostics) {
      if (diagnostic.line) errors.set(diagnostic.line, [...(errors.get(diagnostic.line) ?? []), diagnostic.message]);
    }
    const heat = this.coverageByLine();
    const lines = [];
    for (let line = 1; line <= count; line += 1) {
      const item = el('div', { className: 'ln', 'data-line': String(line) }, String(line));
      const titles = [];
      const cover = heat.get(line);
      if (cover) {
        item.dataset.cov = cover.kind;
        item.dataset.heat = String(cover.heat);
        titles.push(...cover.titles);
      }
      if (errors.has(line)) {
        item.classList.add('error');
        titles.unshift(...errors.get(line).map((message) => `Error: ${message}`));
      }
      if (line === this.target) item.classList.add('target');
      if (titles.length) item.title = titles.join('\n');
      lines.push(item);
    }
    this.gutter.replaceChildren(...lines, el('div', { className: 'ln-end' }));
    this.syncScroll();
    this.renderCoverageTable();
  }

  syncScroll() {
    this.gutter.scrollTop = this.text.scrollTop;
    const lineHeight = parseFloat(getComputedStyle(this.text).lineHeight) || 20;
    const padding = parseFloat(getComputedStyle(this.text).paddingTop) || 0;
    this.band.hidden = !this.target;
    if (this.target) this.band.style.top = `${padding + (this.target - 1) * lineHeight - this.text.scrollTop}px`;
  }

  // -- coverage -----------------------------------------------------------------------------------

  async refreshCoverage() {
    if (!this.open) return;
    try {
      const answer = await adminRequest('GET', '/.inspect/coverage.json', { params: { ns: this.loadedNamespace ?? this.namespace() } });
      if (!answer.ok || !Array.isArray(answer.json)) return;
      this.coverage = answer.json;
      this.renderGutter();
    } catch {
      // the next refresh tries again
    }
  }

  /** line → { kind: none|true|false|mixed|error, heat: 0–3, titles } for the editor's lines holding rules. */
  coverageByLine() {
    const result = new Map();
    if (this.published === null) return result;
    const place = this.placer(this.published);
    for (const rule of this.coverage) {
      const at = place({ line: rule.line, column: rule.column, rule: rule.path });
      if (!at) continue;
      const entry = result.get(at.line) ?? { t: 0, f: 0, e: 0, titles: [] };
      entry.t += rule.true;
      entry.f += rule.false;
      entry.e += rule.error;
      entry.titles.push(`${rule.path}: ${rule.true} true, ${rule.false} false, ${rule.error} errors`);
      result.set(at.line, entry);
    }
    for (const entry of result.values()) {
      const total = entry.t + entry.f + entry.e;
      entry.kind = entry.e ? 'error' : entry.t && entry.f ? 'mixed' : entry.t ? 'true' : entry.f ? 'false' : 'none';
      entry.heat = total === 0 ? 0 : total < 10 ? 1 : total < 100 ? 2 : 3;
    }
    return result;
  }

  /** The table of every rule's counts; rows are updated in place, so a focused link keeps the focus. */
  renderCoverageTable() {
    const body = $('#coverage-table tbody');
    const place = this.placer(this.published);
    const key = this.coverage.map((rule) => `${rule.path} ${rule.line}:${rule.column}`).join('\n');
    if (key !== this.coverageKey) {
      this.coverageKey = key;
      this.coverageRows = this.coverage.map(() => {
        const name = el('button', { type: 'button', className: 'link', onclick: () => name.place && this.goTo(name.place) });
        const cells = [0, 1, 2, 3].map((i) => el('td', { className: i ? 'number' : 'mono expression' }));
        return { row: el('tr', {}, el('td', {}, name), ...cells), name, cells };
      });
      body.replaceChildren(...this.coverageRows.map(({ row }) => row));
    }
    this.coverage.forEach((rule, i) => {
      const { name, cells } = this.coverageRows[i];
      name.place = place({ line: rule.line, column: rule.column, rule: rule.path });
      name.textContent = name.place ? `${rule.path} (line ${name.place.line})` : `${rule.path} (not in the editor)`;
      name.disabled = !name.place;
      [rule.expression, rule.true, rule.false, rule.error].forEach((value, j) => {
        if (cells[j].textContent !== String(value)) cells[j].textContent = String(value);
      });
    });
  }

}
