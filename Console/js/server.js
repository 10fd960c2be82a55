// The server view (#/server): the current figures and line charts of the last minutes (polling
// /.inspect/figures.json every second), and the live connections with their listens (/.inspect/connections.json).

import { adminJSON } from './admin.js';
import { $, el } from './dom.js';
import { drawChart } from './chart.js';

const FIGURES_MS = 1000;
const CONNECTIONS_MS = 3000;

const FIGURES = [
  { key: 'connections', label: 'Connections' },
  { key: 'listens', label: 'Listens' },
  { key: 'views', label: 'Views' },
  { key: 'writesPerSecond', label: 'Writes/s' },
  { key: 'deliveriesPerSecond', label: 'Deliveries/s' },
  { key: 'bytesOutPerSecond', label: 'Bytes out/s', format: bytes },
  { key: 'slowConsumersDropped', label: 'Slow consumers dropped' },
];

const CHARTS = [
  { key: 'connections', label: 'Connections' },
  { key: 'writesPerSecond', label: 'Writes per second' },
  { key: 'deliveriesPerSecond', label: 'Deliveries per second' },
  { key: 'bytesOutPerSecond', label: 'Bytes out per second', format: bytes },
];

export class ServerView {
  constructor() {
    this.status = $('#server-status');
    this.timers = [];
    this.open = false;
    this.values = new Map();
    $('#figures').replaceChildren(...FIGURES.map(({ key, label }) => {
      const value = el('dd', { id: `figure-${key}`, 'data-figure': key }, '–');
      this.values.set(key, value);
      return el('div', { className: 'figure' }, el('dt', {}, label), value);
    }));
    this.charts = CHARTS.map((chart) => {
      const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
      svg.setAttribute('role', 'img');
      svg.setAttribute('data-chart', chart.key);
      const id = `chart-${chart.key}-title`;
      $('#charts').append(el('figure', { className: 'chart', 'aria-labelledby': id },
        el('figcaption', { id }, chart.label), svg));
      return { ...chart, svg };
    });
  }

  show() {
    if (this.open) return;
    this.open = true;
    this.generation = (this.generation ?? 0) + 1;
    this.poll(() => this.refreshFigures(), FIGURES_MS);
    this.poll(() => this.refreshConnections(), CONNECTIONS_MS);
  }

  hide() {
    this.open = false;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers = [];
  }

  /** Runs `task` now and then `every` ms after each run ends, while the view is open. */
  poll(task, every) {
    const slot = this.timers.length;
    const generation = this.generation;
    const run = async () => {
      await task();
      if (this.open && this.generation === generation) this.timers[slot] = setTimeout(run, every);
    };
    this.timers[slot] = 0;
    run();
  }

  async refreshFigures() {
    try {
      const { samples = [], intervalSeconds = 1 } = await adminJSON('/.inspect/figures.json');
      if (!this.open) return;
      this.status.textContent = '';
      const last = samples.at(-1);
      for (const { key, format = String } of FIGURES) this.values.get(key).textContent = last ? format(last[key]) : '–';
      for (const chart of this.charts) {
        drawChart(chart.svg, samples.map((sample) => [sample.time, sample[chart.key]]), {
          span: Math.max(samples.length, 60) * intervalSeconds * 1000,
          format: chart.format ?? String,
          label: chart.label,
        });
      }
    } catch (error) {
      if (this.open) this.status.textContent = `Could not read the figures: ${error.message}`;
    }
  }

  async refreshConnections() {
    try {
      const { total, connections } = await adminJSON('/.inspect/connections.json');
      if (!this.open) return;
      const shown = connections.length < total ? ` (the first ${connections.length} shown)` : '';
      $('#connections-total').textContent = `${total} ${total === 1 ? 'connection' : 'connections'}${shown}`;
      $('#connections-table tbody').replaceChildren(...connections.map((connection) => el('tr', {},
        el('td', { className: 'mono' }, connection.id),
        el('td', { className: 'mono' }, connection.namespace),
        el('td', {}, connection.transport),
        el('td', { className: 'mono' }, authText(connection.auth)),
        el('td', {}, listensList(connection.listens)))));
    } catch (error) {
      if (this.open) this.status.textContent = `Could not read the connections: ${error.message}`;
    }
  }
}

function authText(auth) {
  if (auth === null || auth === undefined) return 'unauthenticated';
  if (auth === 'admin') return 'admin';
  return JSON.stringify(auth);
}

function listensList(listens) {
  if (!listens.length) return el('span', { className: 'muted' }, 'none');
  return el('ul', { className: 'listens' }, ...listens.map(({ path, query }) =>
    el('li', { className: 'mono' }, query ? `${path} ${JSON.stringify(query)}` : path)));
}

/** 1234 → "1.2 kB/s" */
function bytes(value) {
  if (value < 1000) return `${value} B/s`;
  const units = ['kB/s', 'MB/s', 'GB/s'];
  let scaled = value;
  let unit = -1;
  while (scaled >= 1000 && unit < units.length - 1) {
    scaled /= 1000;
    unit += 1;
  }
  return `${scaled.toFixed(scaled < 10 ? 1 : 0)} ${units[unit]}`;
}
