// The modal dialogs of index.html: confirmation, new child, move target. Escape or Cancel closes them
// without effect; the browser returns focus to the control that opened them.

import { isPrefix, isValidKey, parseInput, pathString, splitPath } from './data.js';
import { $ } from './dom.js';

for (const button of document.querySelectorAll('dialog [data-cancel]')) {
  button.addEventListener('click', () => button.closest('dialog').close());
}

/** Opens `dialog`; resolves true when its form was submitted and `validate()` found no problem. */
function run(dialog, validate = () => null) {
  const form = dialog.querySelector('form');
  const error = dialog.querySelector('.error');
  if (error) error.textContent = '';
  dialog.returnValue = '';
  return new Promise((resolve) => {
    const submit = (event) => {
      const problem = validate();
      if (problem) {
        event.preventDefault();
        error.textContent = problem;
      }
    };
    form.addEventListener('submit', submit);
    dialog.addEventListener('close', () => {
      form.removeEventListener('submit', submit);
      resolve(dialog.returnValue === 'ok');
    }, { once: true });
    dialog.showModal();
  });
}

export function confirmAction({ title, message, confirmLabel }) {
  $('#confirm-title').textContent = title;
  $('#confirm-message').textContent = message;
  $('#confirm-ok').textContent = confirmLabel;
  return run($('#confirm-dialog'));
}

/** Asks for a key (prefilled with `suggestedKey`) and a value; resolves { key, value } or null. */
export async function askNewChild(parentPath, suggestedKey) {
  const key = $('#add-key');
  const value = $('#add-value');
  $('#add-parent').textContent = `Under ${parentPath}`;
  key.value = suggestedKey;
  value.value = '';
  const ok = await run($('#add-dialog'), () => {
    if (!isValidKey(key.value)) return 'A key is 1 to 768 bytes without . # $ [ ] / or control characters.';
    const parsed = parseInput(value.value);
    if (value.value.trim() === '' || parsed === null || (typeof parsed === 'object' && !Object.keys(parsed).length)) {
      return 'Enter a value (JSON, or text for a string); null or {} would write nothing.';
    }
    return null;
  });
  return ok ? { key: key.value, value: parseInput(value.value) } : null;
}

/** Asks where to move `segs`: a new key (or path relative to the parent), or an absolute path. */
export async function askMoveTarget(segs) {
  const input = $('#move-target');
  $('#move-source').textContent = `Moving ${pathString(segs)}`;
  input.value = segs.at(-1);
  let target = null;
  const ok = await run($('#move-dialog'), () => {
    const text = input.value.trim();
    target = text.startsWith('/') ? splitPath(text) : [...segs.slice(0, -1), ...splitPath(text)];
    if (!target.length || !target.every(isValidKey)) return 'Enter a key, or a path of valid keys starting with /.';
    if (isPrefix(segs, target)) return 'The new location must not be the node itself or inside it.';
    if (isPrefix(target, segs)) return 'The new location must not contain the node.';
    return null;
  });
  return ok ? target : null;
}
