// The trace of a rules decision (every rule tried, in order) as a table; each rule links to its line in the
// rules view.

import { el } from './dom.js';

/** The rules view's route at a line (and column). */
export function rulesLineHash(line, column) {
  return `#/rules?line=${line}${column ? `&column=${column}` : ''}`;
}

/** "true", "false" or "error" for an outcome text ("error: …" is an error). */
export function outcomeKind(outcome) {
  return outcome === 'true' || outcome === 'false' ? outcome : 'error';
}

/**
 * `trace`: [{ kind, rule, line, column, location, expression, outcome }]. `place(step)` gives the rule's
 * { line, column } in the editor (or null); `go(place)`, when given, handles a click on the link itself.
 */
export function traceTable(trace, { place = serverPlace, go, empty = 'No rule was tried.' } = {}) {
  if (!trace.length) return el('p', { className: 'trace-empty' }, empty);
  const header = ['Rule', 'Location', 'Expression', 'Outcome'].map((name) => el('th', { scope: 'col' }, name));
  const rows = trace.map((step) => {
    const at = place(step);
    const rule = at
      ? el('a', {
        href: rulesLineHash(at.line, at.column),
        className: 'rule-link',
        onclick: go && ((event) => {
          event.preventDefault();
          go(at);
        }),
      }, step.rule, el('span', { className: 'line-ref' }, ` line ${at.line}`))
      : el('span', { className: 'rule-link' }, step.rule);
    const kind = outcomeKind(step.outcome);
    return el('tr', { className: `outcome-${kind}`, 'data-rule': step.rule },
      el('td', {}, rule),
      el('td', { className: 'mono' }, step.location),
      el('td', { className: 'mono expression' }, step.expression),
      el('td', { className: 'outcome' }, step.outcome));
  });
  return el('table', { className: 'trace' }, el('thead', {}, el('tr', {}, ...header)), el('tbody', {}, ...rows));
}

function serverPlace(step) {
  return step.line ? { line: step.line, column: step.column } : null;
}

/** ALLOWED / DENIED, prominent. */
export function decisionBadge(allowed) {
  return el('strong', { className: `decision ${allowed ? 'allowed' : 'denied'}` }, allowed ? 'ALLOWED' : 'DENIED');
}
