// The rules simulator beside the rules editor: the decision on a read, set or update that is never made
// (POST /.settings/simulate.json), against the rules in force or the editor's, with the trace of every rule tried.

import { adminRequest, answerMessage } from './admin.js';
import { isValidKey, isValidNamespace, pathString, splitPath } from './data.js';
import { $, el } from './dom.js';
import { decisionBadge, traceTable } from './trace.js';

export class Simulator {
  /** `view`: the RulesView (its editor, positions and diagnostics); `namespace()`: the namespace to start with. */
  constructor({ view, namespace }) {
    this.view = view;
    this.namespace = namespace;
    this.form = $('#sim-form');
    this.result = $('#sim-result');
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.run();
    });
    this.form.elements.operation.addEventListener('change', () => this.showValueField());
    this.showValueField();
    const field = this.form.elements.ns;
    field.addEventListener('input', () => {
      this.chosenNamespace = field.value.trim() !== '';
    });
  }

  /** When the view opens: the namespace is the data view's, unless one was typed here. */
  show() {
    if (!this.chosenNamespace) this.form.elements.ns.value = this.namespace();
  }

  showValueField() {
    const read = this.form.elements.operation.value === 'read';
    $('#sim-value-field').hidden = read;
    this.form.elements.value.disabled = read;
  }

  problem(text) {
    this.result.replaceChildren(el('p', { className: 'error', role: 'alert' }, text));
  }

  /** The case the form describes, or a string saying what is wrong. */
  readCase() {
    const fields = this.form.elements;
    const ns = fields.ns.value.trim();
    if (!isValidNamespace(ns)) return 'A namespace is 1 to 63 of a-z A-Z 0-9 - _.';
    const segs = splitPath(fields.path.value);
    if (!segs.every(isValidKey)) return 'A path is keys separated by /, without . # $ [ ] or control characters.';
    const operation = fields.operation.value;
    const testCase = { name: `${operation} ${pathString(segs)}`, operation, path: pathString(segs) };
    const authText = fields.auth.value.trim();
    if (['', 'unauthenticated', 'null'].includes(authText)) testCase.auth = null;
    else {
      try {
        testCase.auth = JSON.parse(authText);
      } catch {
        return 'Auth is JSON (for example {"uid": "alice"}), or unauthenticated.';
      }
    }
    if (operation !== 'read') {
      try {
        testCase.value = JSON.parse(fields.value.value);
      } catch {
        return 'The value is JSON: a string needs double quotes.';
      }
      if (operation === 'update' && (testCase.value === null || typeof testCase.value !== 'object' || Array.isArray(testCase.value))) {
        return 'An update value is an object of relative paths and their new values.';
      }
    }
    return { ns, testCase };
  }

  async run() {
    const read = this.readCase();
    if (typeof read === 'string') return this.problem(read);
    const { ns, testCase } = read;
    const draft = this.form.elements.draft.checked;
    const body = { cases: [testCase] };
    let source = this.view.published; // the text the server compiles, which its lines and columns are about
    if (draft) {
      const rules = this.view.parsedText();
      if (rules === null) return this.problem('The editor\'s rules are not valid JSON: see the error below the editor.');
      body.rules = rules;
      source = JSON.stringify(rules); // the server compiles its own compact copy of the rules
    }
    this.result.replaceChildren(el('p', {}, 'Simulating…'));
    let answer;
    try {
      answer = await adminRequest('POST', '/.settings/simulate.json', { params: { ns }, body: JSON.stringify(body) });
    } catch (error) {
      return this.problem(`The simulation failed: ${error.message}`);
    }
    if (answer.status === 400 && Array.isArray(answer.json?.diagnostics)) {
      this.view.showServerDiagnostics(answer.json, source);
      return this.problem(`The rules do not load: ${answer.json.error}`);
    }
    const result = answer.json?.results?.[0];
    if (!answer.ok || !result) return this.problem(`The simulation failed: ${answerMessage(answer)}`);
    this.render(result, { ns, testCase, draft, source });
  }

  render(result, { ns, testCase, draft, source }) {
    const who = testCase.auth === null ? 'unauthenticated' : `auth ${JSON.stringify(testCase.auth)}`;
    const against = draft ? 'the editor\'s rules (not published)' : 'the rules in force';
    const place = this.view.placer(source);
    const parts = [
      el('p', { className: 'decision-line' }, decisionBadge(result.allowed)),
      el('p', { className: 'sim-summary' }, `${testCase.operation} ${testCase.path} as ${who}, by ${against}, on the data of ${ns}. Nothing was written.`),
    ];
    if (result.error) parts.push(el('p', { className: 'error' }, result.error));
    parts.push(traceTable(result.trace, {
      place,
      go: (at) => this.view.goTo(at),
      empty: result.allowed ? 'No rule was tried.' : 'No rule grants this: denied by default.',
    }));
    this.result.replaceChildren(...parts);
  }
}
