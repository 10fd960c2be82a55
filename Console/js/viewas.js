// "View as": the data view's connection authenticates with the admin credential and an auth variable, so the
// server applies the rules as that user (wire-protocol §6.2 `authvar`; `noauth` for unauthenticated).

import { $ } from './dom.js';

/**
 * Reads the View as form. `apply(authvar)` re-authenticates (undefined: admin; null: unauthenticated; else the
 * auth variable) and resolves once the server answered. Returns { authvar() }, what is in force.
 */
export function setUpViewAs({ apply }) {
  const form = $('#view-as-form');
  const input = $('#view-as-input');
  const status = $('#view-as-status');
  let current;

  const describe = () => {
    status.classList.remove('error');
    form.classList.toggle('active', current !== undefined);
    status.textContent = current === undefined
      ? 'Viewing as the admin: rules bypassed.'
      : `Viewing as ${current === null ? 'an unauthenticated user' : JSON.stringify(current)}: the rules apply, to reads and writes.`;
  };

  const use = async (authvar) => {
    try {
      await apply(authvar);
      current = authvar;
      describe();
    } catch (error) {
      status.textContent = `Could not view as that user: ${error.message}`;
      status.classList.add('error');
    }
  };

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (text === '') return use(undefined);
    if (text === 'null' || text === 'unauthenticated') return use(null);
    let value;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      status.textContent = 'Enter auth as a JSON object, for example {"uid": "alice"}; null for unauthenticated; empty for the admin.';
      status.classList.add('error');
      return;
    }
    use(value);
  });

  $('#view-as-clear').addEventListener('click', () => {
    input.value = '';
    use(undefined);
  });

  describe();
  return { authvar: () => current };
}
