// A small SVG line chart of a time series: [time ms, value] points, the newest at the right edge.

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 400;
const HEIGHT = 130;
const PAD = { left: 6, right: 6, top: 18, bottom: 18 };

function node(name, attributes = {}, text) {
  const element = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  if (text !== undefined) element.textContent = text;
  return element;
}

/** A round upper bound for the axis: 1, 2, 5 × 10^n. */
function ceiling(value) {
  if (value <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (value <= step * power) return step * power;
  return 10 * power;
}

/**
 * Draws `points` into `svg`, over the last `span` ms before the newest point. `format` writes a value for the
 * labels; `label` names the series in the chart's accessible description.
 */
export function drawChart(svg, points, { span, format = String, label = '' }) {
  svg.setAttribute('viewBox', `0 0 ${WIDTH} ${HEIGHT}`);
  const plotWidth = WIDTH - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const end = points.length ? points.at(-1)[0] : 0;
  const shown = points.filter(([time]) => time >= end - span);
  const top = ceiling(Math.max(0, ...shown.map(([, value]) => value)));
  const x = (time) => PAD.left + plotWidth * (1 - (end - time) / span);
  const y = (value) => PAD.top + plotHeight * (1 - value / top);
  const line = shown.map(([time, value], i) => `${i ? 'L' : 'M'}${x(time).toFixed(1)} ${y(value).toFixed(1)}`).join(' ');
  const children = [
    node('line', { class: 'grid', x1: PAD.left, x2: WIDTH - PAD.right, y1: y(top), y2: y(top) }),
    node('line', { class: 'grid', x1: PAD.left, x2: WIDTH - PAD.right, y1: y(top / 2), y2: y(top / 2) }),
    node('line', { class: 'axis', x1: PAD.left, x2: WIDTH - PAD.right, y1: y(0), y2: y(0) }),
    node('text', { class: 'tick', x: PAD.left, y: PAD.top - 5 }, format(top)),
    node('text', { class: 'tick', x: PAD.left, y: HEIGHT - 4 }, `${Math.round(span / 60000)} min ago`),
    node('text', { class: 'tick', x: WIDTH - PAD.right, y: HEIGHT - 4, 'text-anchor': 'end' }, 'now'),
  ];
  if (shown.length) {
    const first = x(shown[0][0]).toFixed(1);
    const last = x(end).toFixed(1);
    const base = y(0).toFixed(1);
    children.push(node('path', { class: 'area', d: `${line} L${last} ${base} L${first} ${base} Z` }));
    children.push(node('path', { class: 'series', d: line, 'data-points': String(shown.length) }));
    const [, now] = shown.at(-1);
    children.push(node('circle', { class: 'dot', cx: last, cy: y(now).toFixed(1), r: 2.5 }));
  }
  svg.replaceChildren(...children);
  const now = shown.length ? format(shown.at(-1)[1]) : 'no data';
  const highest = shown.length ? format(Math.max(...shown.map(([, value]) => value))) : 'no data';
  svg.setAttribute('aria-label', `${label} over the last ${Math.round(span / 60000)} minutes: now ${now}, highest ${highest}`);
}
