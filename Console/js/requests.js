// The requests view (#/requests): the rule evaluations as they happen (server-sent events of
// /.inspect/evaluations), newest first, at most MAX_ROWS; each expands to its trace. The stream is open only
// while the view is shown (the server traces evaluations only while someone watches).

import { evaluationsURL } from './admin.js';
import { $, el } from './dom.js';
import { decisionBadge, traceTable } from './trace.js';

const MAX_ROWS = 500;

export class RequestsView {
  constructor() {
    this.body = $('#requests-table');
    this.status = $('#requests-status');
    this.filter = $('#requests-filter');
    this.pauseButton = $('#requests-pause');
    this.source = null;
    this.paused = false;
    this.held = []; // events received while paused, oldest first
    this.queue = []; // events to add at the next frame
    this.seen = new Set(); // the data of the rows shown: a reconnected stream replays recent evaluations
    this.skipped = 0;
    this.filter.addEventListener('change', () => this.applyFilter());
    this.pauseButton.addEventListener('click', () => this.setPaused(!this.paused));
    $('#requests-clear').addEventListener('click', () => this.clear());
  }

  show() {
    if (this.source) return;
    this.setStatus('Connecting…');
    const source = new EventSource(evaluationsURL());
    this.source = source;
    source.onopen = () => this.source === source && this.setStatus('Live: evaluations appear as they happen.');
    source.onmessage = (event) => this.source === source && this.receive(event.data);
    source.onerror = () => {
      if (this.source !== source) return;
      this.setStatus(source.readyState === EventSource.CLOSED
        ? 'Not connected: the server refused the stream.'
        : 'Connection lost; reconnecting…');
    };
  }

  hide() {
    this.source?.close();
    this.source = null;
  }

  setStatus(text) {
    const parts = [text];
    if (this.paused) parts.push(`Paused: ${this.held.length} new ${this.held.length === 1 ? 'evaluation' : 'evaluations'} held.`);
    if (this.skipped) parts.push(`${this.skipped} evaluations were not sent (more than 200 a second).`);
    this.statusText = text;
    this.status.textContent = parts.filter(Boolean).join(' ');
  }

  receive(data) {
    if (this.seen.has(data)) return;
    let event;
    try {
      event = JSON.parse(data);
    } catch {
      return;
    }
    this.seen.add(data);
    event.raw = data;
    if (this.paused) {
      this.held.push(event);
      if (this.held.length > MAX_ROWS) this.seen.delete(this.held.shift().raw);
      this.setStatus(this.statusText);
      return;
    }
    this.queue.push(event);
    if (!this.frame) this.frame = requestAnimationFrame(() => this.flush());
  }

  /** Adds the queued events at the top, newest first, and drops the oldest rows beyond MAX_ROWS. */
  flush() {
    this.frame = null;
    const events = this.queue.splice(0).slice(-MAX_ROWS);
    for (const event of events) {
      this.skipped += event.skipped || 0;
      this.body.insertBefore(this.row(event), this.body.tBodies[0] ?? null);
    }
    while (this.body.tBodies.length > MAX_ROWS) {
      const last = this.body.tBodies[this.body.tBodies.length - 1];
      this.seen.delete(last.dataset.raw);
      last.remove();
    }
    $('#requests-empty').hidden = this.body.tBodies.length > 0;
    this.setStatus(this.statusText);
  }

  setPaused(paused) {
    this.paused = paused;
    this.pauseButton.setAttribute('aria-pressed', String(paused));
    this.pauseButton.textContent = paused ? 'Resume' : 'Pause';
    if (!paused && this.held.length) {
      this.queue.push(...this.held.splice(0));
      this.flush();
    }
    this.setStatus(this.statusText);
  }

  clear() {
    for (const group of [...this.body.tBodies]) group.remove();
    this.queue = [];
    this.held = [];
    this.seen.clear();
    this.skipped = 0;
    $('#requests-empty').hidden = false;
    this.setStatus(this.statusText);
  }

  applyFilter() {
    this.body.classList.toggle('denied-only', this.filter.value === 'denied');
  }

  /** One evaluation: a row of its own (its time is the button that expands the trace) and a hidden trace row. */
  row(event) {
    const time = new Date(event.time);
    const clock = time.toLocaleTimeString([], { hour12: false }) + '.' + String(time.getMilliseconds()).padStart(3, '0');
    const who = user(event.auth);
    const traceRow = el('tr', { className: 'trace-row', hidden: true },
      el('td', { colSpan: 6 }, traceTable(event.trace ?? [], {
        empty: event.allowed ? 'No rule was tried.' : 'No rule grants this: denied by default.',
      })));
    const toggle = el('button', {
      type: 'button', className: 'expand', 'aria-expanded': 'false',
      'aria-label': `Rules tried: ${event.operation} ${event.path} by ${who} at ${clock}, ${event.allowed ? 'allowed' : 'denied'}`,
      onclick: () => {
        const open = traceRow.hidden;
        traceRow.hidden = !open;
        toggle.setAttribute('aria-expanded', String(open));
      },
    }, el('span', { className: 'arrow', 'aria-hidden': 'true' }), clock);
    // The whole row toggles too (for the mouse); the button is what the keyboard and screen readers use.
    const onclick = (click) => click.target.closest('button, a') || toggle.click();
    const group = el('tbody', { className: event.allowed ? 'event allowed' : 'event denied', 'data-raw': event.raw },
      el('tr', { className: 'event-row', onclick },
        el('td', {}, toggle),
        el('td', { className: 'mono' }, event.namespace ?? ''),
        el('td', {}, event.operation),
        el('td', { className: 'mono' }, event.path),
        el('td', { className: 'mono', title: event.auth ? JSON.stringify(event.auth) : 'unauthenticated' }, who),
        el('td', {}, decisionBadge(event.allowed))),
      traceRow);
    return group;
  }
}

/** The uid of an auth variable, or a short description of it. */
function user(auth) {
  if (auth === null || auth === undefined) return 'unauthenticated';
  if (typeof auth === 'object' && typeof auth.uid === 'string') return auth.uid;
  const text = JSON.stringify(auth);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}
