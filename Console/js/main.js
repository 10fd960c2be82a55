// The console page: sign-in, routing (#/data/<ns>/<path>, #/rules, #/requests, #/server), the location bar,
// the filter, import/export, and the edit actions the tree calls. One WireClient (one WebSocket) per namespace
// shown. The other views are modules of their own (rulesview.js, requests.js, server.js).

import { setUnauthorizedHandler } from './admin.js';
import { isPrefix, isValidKey, isValidNamespace, pathString, splitPath } from './data.js';
import { askMoveTarget, askNewChild, confirmAction } from './dialogs.js';
import { $, el } from './dom.js';
import { readFilter } from './filter.js';
import { refreshNamespaces } from './namespaces.js';
import { pushId } from './pushid.js';
import { RequestsView } from './requests.js';
import { exportText, putText, readExport } from './rest.js';
import { DEFAULT_NAMESPACE, navigate, routeHash, startRouter } from './router.js';
import { RulesView } from './rulesview.js';
import { ServerView } from './server.js';
import { captureToken, clearToken, getToken, isDevServer, serverOrigin, setToken } from './session.js';
import { Tree } from './tree.js';
import { setUpViewAs } from './viewas.js';
import { WireClient } from './wire.js';

let wire = null;
let tree = null;
let current = null; // { ns, segs } shown
let filter = { query: null, index: undefined };
let stopRouter = null;
let shownView = null; // data, rules, requests or server

const SECTIONS = { data: '#console', rules: '#rules-view', requests: '#requests-view', server: '#server-view' };
const TITLES = { rules: 'Rules', requests: 'Requests', server: 'Server' };
const views = {
  rules: new RulesView({ namespace: () => current?.ns ?? DEFAULT_NAMESPACE }),
  requests: new RequestsView(),
  server: new ServerView(),
};
const viewAs = setUpViewAs({ apply: (authvar) => wire?.reauthenticate(authvar) });
setUnauthorizedHandler((message) => getToken() && onAuthError(message));

// -- messages -------------------------------------------------------------------------------------

function notify(text, isError = false) {
  const notice = $('#notice');
  notice.textContent = text;
  notice.classList.toggle('error', isError);
}

function report(error) {
  notify(error instanceof Error ? error.message : String(error), true);
}

/** Runs an action, reporting success or failure in the notice area. */
async function attempt(action, success) {
  try {
    await action();
    notify(success);
  } catch (error) {
    report(error);
  }
}

// -- sign-in --------------------------------------------------------------------------------------

function showSignIn(message = '') {
  stop();
  for (const section of Object.values(SECTIONS)) $(section).hidden = true;
  $('#views-nav').hidden = true;
  $('#sign-out').hidden = true;
  $('#sign-in').hidden = false;
  $('#sign-in-error').textContent = message;
  $('#credential').value = '';
  $('#credential').focus();
}

$('#sign-in-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const token = $('#credential').value.trim();
  if (!token) return;
  setToken(token);
  start();
});

$('#sign-out').addEventListener('click', () => {
  clearToken();
  showSignIn();
});

function start() {
  $('#sign-in').hidden = true;
  $('#sign-out').hidden = false;
  $('#views-nav').hidden = false;
  refreshNamespaces();
  stopRouter = startRouter(show);
}

function stop() {
  stopRouter?.();
  stopRouter = null;
  views[shownView]?.hide();
  shownView = null;
  tree?.destroy();
  wire?.close();
  tree = wire = current = null;
  $('#connection').textContent = '';
  delete $('#connection').dataset.state;
}

// -- views ----------------------------------------------------------------------------------------

function show(route) {
  if (shownView !== route.view) views[shownView]?.hide();
  shownView = route.view;
  for (const [view, section] of Object.entries(SECTIONS)) $(section).hidden = view !== route.view;
  for (const link of document.querySelectorAll('#views-nav a')) {
    if (link.dataset.view === route.view) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  if (route.view === 'data') return showData(route);
  document.title = `${TITLES[route.view]} · Canopy console`;
  views[route.view].show(route);
}

function showData({ ns, segs }) {
  const samePlace = current && current.ns === ns && pathString(current.segs) === pathString(segs);
  current = { ns, segs };
  document.title = `${pathString(segs)} · ${ns} · Canopy console`;
  $('#ns-input').value = ns;
  $('#path-input').value = pathString(segs);
  renderBreadcrumbs();
  $('#nav-data').href = routeHash(ns, segs);
  if (wire?.ns !== ns) {
    tree?.destroy();
    tree = null;
    wire?.close();
    wire = new WireClient({
      origin: serverOrigin, ns, token: getToken(), authvar: viewAs.authvar(), onStatus: showStatus, onAuthError,
    });
  }
  if (!samePlace) {
    $('#filter-form').reset();
    filter = { query: null, index: undefined };
  }
  showTree();
}

function showTree() {
  tree?.destroy();
  tree = new Tree($('#tree'), { wire, ns: current.ns, segs: current.segs, ...filter, actions });
}

function showStatus(state, detail) {
  const status = $('#connection');
  status.dataset.state = state;
  const text = { connecting: 'Connecting…', connected: `Connected to ${current?.ns ?? ''}`, offline: 'Offline' }[state];
  status.textContent = detail ? `${text} (${detail})` : text;
}

function onAuthError(reason) {
  clearToken();
  showSignIn(`The server refused the credential (${reason}).`);
}

function renderBreadcrumbs() {
  const { ns, segs } = current;
  const items = [ns, ...segs].map((label, i) => {
    const here = i === segs.length;
    const content = here
      ? el('span', { 'aria-current': 'page' }, label)
      : el('a', { href: routeHash(ns, segs.slice(0, i)) }, label);
    return el('li', {}, content);
  });
  $('#breadcrumbs ol').replaceChildren(...items);
}

// -- location bar and filter ----------------------------------------------------------------------

$('#location-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const ns = $('#ns-input').value.trim() || DEFAULT_NAMESPACE;
  const segs = splitPath($('#path-input').value);
  if (!isValidNamespace(ns)) return notify('A namespace is 1 to 63 of a-z A-Z 0-9 - _.', true);
  if (!segs.every(isValidKey)) return notify('A path is keys separated by /, without . # $ [ ] or control characters.', true);
  notify('');
  navigate(ns, segs);
});

for (const input of document.querySelectorAll('input[list="namespaces"]')) {
  input.addEventListener('focus', refreshNamespaces);
}

$('#location-form').addEventListener('keydown', (event) => {
  if (event.key !== 'Escape' || !current) return;
  $('#ns-input').value = current.ns;
  $('#path-input').value = pathString(current.segs);
});

$('#filter-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const result = readFilter(event.target);
  if (result.error) return notify(result.error, true);
  notify('');
  filter = result;
  showTree();
});

$('#filter-clear').addEventListener('click', () => {
  $('#filter-form').reset();
  notify('');
  filter = { query: null, index: undefined };
  showTree();
});

// -- edit actions (called by the tree) ------------------------------------------------------------

const actions = {
  report,

  set: (segs, value) => wire.set(segs, value),

  async add(segs) {
    const child = await askNewChild(pathString(segs), pushId(wire.serverTime()));
    if (!child) return;
    const target = [...segs, child.key];
    await attempt(() => wire.set(target, child.value), `Added ${pathString(target)}.`);
  },

  async remove(segs) {
    const ok = await confirmAction({
      title: 'Delete data?',
      message: `Delete ${pathString(segs)} and everything below it in namespace ${current.ns}? This cannot be undone.`,
      confirmLabel: 'Delete',
    });
    if (ok) await attempt(() => wire.set(segs, null), `Deleted ${pathString(segs)}.`);
  },

  /** Writes the value at the new place and removes the old one in one multi-path update at their common parent. */
  async move(segs) {
    const target = await askMoveTarget(segs);
    if (!target) return;
    const { ns } = current;
    try {
      const [value, existing] = await Promise.all([readExport(ns, segs), readExport(ns, target)]);
      if (value === null) return notify(`${pathString(segs)} no longer exists.`, true);
      if (existing !== null && !(await confirmAction({
        title: 'Replace existing data?',
        message: `${pathString(target)} already holds data. Replace it with ${pathString(segs)}?`,
        confirmLabel: 'Replace',
      }))) return;
      let common = 0;
      while (segs[common] === target[common]) common += 1;
      const relative = (path) => path.slice(common).join('/');
      await wire.update(segs.slice(0, common), { [relative(segs)]: null, [relative(target)]: value });
      notify(`Moved ${pathString(segs)} to ${pathString(target)}.`);
      if (current?.ns === ns && isPrefix(segs, current.segs)) navigate(ns, [...target, ...current.segs.slice(segs.length)]);
    } catch (error) {
      report(error);
    }
  },
};

// -- import / export ------------------------------------------------------------------------------

$('#export').addEventListener('click', () => attempt(async () => {
  const { ns, segs } = current;
  const text = await exportText(ns, segs);
  const link = el('a', {
    href: URL.createObjectURL(new Blob([text], { type: 'application/json' })),
    download: `${segs.length ? [ns, ...segs].join('-') : `${ns}-root`}.json`,
  });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 60000);
}, 'Exported.'));

$('#import-file').addEventListener('change', async (event) => {
  const file = event.target.files[0];
  event.target.value = '';
  if (!file) return;
  const { ns, segs } = current;
  const text = await file.text();
  try {
    JSON.parse(text);
  } catch {
    return notify(`${file.name} is not valid JSON.`, true);
  }
  const ok = await confirmAction({
    title: 'Import JSON?',
    message: `Replace everything at ${pathString(segs)} in namespace ${ns} with the contents of ${file.name} (${file.size} bytes)?`,
    confirmLabel: 'Import',
  });
  if (ok) await attempt(() => putText(ns, segs, text), `Imported ${file.name} into ${pathString(segs)}.`);
});

// -- start ----------------------------------------------------------------------------------------

if (isDevServer) {
  $('#dev-server').hidden = false;
  $('#dev-server').textContent = `Development: data from ${serverOrigin}`;
}
// A credential arriving in the fragment later (a pasted sign-in link) signs in again with it.
addEventListener('hashchange', () => {
  if (!captureToken()) return;
  stop();
  start();
});
captureToken();
if (getToken()) start();
else showSignIn();
