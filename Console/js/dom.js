// Building DOM elements.

/** el('button', { className: 'x', 'aria-label': 'Close', onclick }, 'text', child…) */
export function el(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (name === 'role' || name.startsWith('aria-') || name.startsWith('data-')) element.setAttribute(name, value);
    else element[name] = value;
  }
  element.append(...children);
  return element;
}

export const $ = (selector) => document.querySelector(selector);
