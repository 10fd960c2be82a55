// A small client of the Firebase Realtime Database wire protocol (version 5): one WebSocket to
// `/.ws?v=5&ns=…`, authenticated right after the hello, carrying every listen and write of the page.
// It keeps each listen's data up to date from the server's pushes and reconnects (re-sending listens
// and unacknowledged writes) after a drop.

import { getAt, isPrefix, deepEqual, pathString, setAt, splitPath } from './data.js';

const MAX_FRAME_CHARS = 16384;
const KEEPALIVE_MS = 45000;
const MIN_RETRY_MS = 1000;
const MAX_RETRY_MS = 30000;

export class WireClient {
  /**
   * `onStatus(state, detail)`: state is connecting, connected or offline. `onAuthError(reason)`: credential refused.
   * `authvar`: the auth variable the rules see (undefined: none, the credential's own; null: unauthenticated).
   */
  constructor({ origin, ns, token, authvar, onStatus = () => {}, onAuthError = () => {} }) {
    this.ns = ns;
    this.token = token;
    this.authvar = authvar;
    this.onStatus = onStatus;
    this.onAuthError = onAuthError;
    // coalesce=250: each listen gets its latest data at most every 250 ms, so a busy namespace cannot flood the page.
    this.url = `${origin.replace(/^http/, 'ws')}/.ws?v=5&ns=${encodeURIComponent(ns)}&coalesce=250`;
    this.serverOffset = 0;
    this.listens = new Map(); // path and query → listen
    this.tags = new Map(); // tag → listen (queries with a range or limit)
    this.denied = new Map(); // path and query → listen refused or revoked, listened again after a new auth
    this.writes = []; // sent or queued, not acknowledged yet, in order
    this.handlers = new Map(); // request number → response handler, for the current socket
    this.nextRequest = 1;
    this.nextTag = 1;
    this.retries = 0;
    this.closed = false;
    this.ready = false;
    this.socket = null;
    this.sessionId = null;
    this.connect();
  }

  /** Milliseconds since the epoch by the server's clock (as far as the hello tells). */
  serverTime() {
    return Date.now() + this.serverOffset;
  }

  close() {
    this.closed = true;
    this.ready = false;
    clearTimeout(this.retryTimer);
    clearTimeout(this.keepaliveTimer);
    this.socket?.close(1000);
    this.socket = null;
    for (const write of this.writes) write.reject(new Error('connection closed'));
    this.writes = [];
  }

  /**
   * Keeps `onChange(listen)` informed of the data at `segs`: the whole node when `query` is null, else the
   * children selected by the wire query object (sent tagged). `listen` has `data`, `complete` (the server
   * confirmed the listen) and `error`. Returns the function that stops listening.
   */
  listen(segs, query, onChange) {
    const identity = pathString(segs) + (query ? ' ' + JSON.stringify(query) : '');
    let listen = this.listens.get(identity);
    if (listen) {
      queueMicrotask(() => listen.subscribers.has(onChange) && onChange(listen));
    } else {
      const tag = query ? this.nextTag++ : undefined;
      listen = { identity, segs, query, tag, data: null, complete: false, error: null, subscribers: new Set() };
      this.listens.set(identity, listen);
      if (tag) this.tags.set(tag, listen);
      if (this.ready) this.sendListen(listen);
    }
    listen.subscribers.add(onChange);
    return () => {
      listen.subscribers.delete(onChange);
      if (!listen.subscribers.size && this.denied.get(identity) === listen) this.denied.delete(identity);
      if (listen.subscribers.size || this.listens.get(identity) !== listen) return;
      this.forget(listen);
      if (this.ready) this.request('n', this.listenBody(listen));
    };
  }

  set(segs, value) {
    return this.write('p', { p: pathString(segs), d: value });
  }

  /** Multi-path update: `values` maps paths relative to `segs` to new values (null deletes). */
  update(segs, values) {
    return this.write('m', { p: pathString(segs), d: values });
  }

  // -- connection ---------------------------------------------------------------------------------

  connect() {
    this.setStatus('connecting');
    const url = this.sessionId ? `${this.url}&ls=${encodeURIComponent(this.sessionId)}` : this.url;
    const socket = new WebSocket(url);
    this.socket = socket;
    this.fragments = null;
    socket.onmessage = (event) => this.socket === socket && this.receiveFrame(event.data);
    socket.onclose = () => this.socket === socket && this.dropped();
  }

  dropped() {
    this.socket = null;
    this.ready = false;
    this.handlers.clear();
    clearTimeout(this.keepaliveTimer);
    if (this.closed) return;
    const delay = Math.min(MAX_RETRY_MS, MIN_RETRY_MS * 1.3 ** this.retries++) * (0.5 + Math.random() / 2);
    this.setStatus('offline', `reconnecting in ${Math.ceil(delay / 1000)} s`);
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  setStatus(state, detail = '') {
    this.onStatus(state, detail);
  }

  /** After the hello: credential first, then every listen and unacknowledged write, in order. */
  hello({ ts, s }) {
    this.serverOffset = typeof ts === 'number' ? ts - Date.now() : 0;
    this.sessionId = s ?? null;
    this.ready = true;
    this.retries = 0;
    this.request('auth', this.authBody(), (response) => {
      if (response.s === 'ok') return;
      this.close();
      this.setStatus('offline', 'credential refused');
      this.onAuthError(response.d || response.s);
    });
    for (const listen of this.listens.values()) this.sendListen(listen);
    this.listenAgain();
    for (const write of this.writes) this.sendWrite(write);
    this.setStatus('connected');
  }

  authBody() {
    if (this.authvar === undefined) return { cred: this.token };
    if (this.authvar === null) return { cred: this.token, noauth: true };
    return { cred: this.token, authvar: this.authvar };
  }

  /**
   * Authenticates again with the same credential and another auth variable (see the constructor). The server
   * revokes the listens the new identity may not read; once it accepted, the refused ones are listened to again.
   */
  reauthenticate(authvar) {
    this.authvar = authvar;
    if (!this.ready) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.request('auth', this.authBody(), (response) => {
        if (response.s !== 'ok') return reject(new Error(`${response.s}: ${typeof response.d === 'string' ? response.d : ''}`));
        this.listenAgain();
        resolve();
      });
    });
  }

  /** Sends again the listens that were refused or revoked (and still have subscribers). */
  listenAgain() {
    const denied = [...this.denied.values()];
    this.denied.clear();
    for (const listen of denied) {
      if (!listen.subscribers.size) continue;
      const existing = this.listens.get(listen.identity);
      if (existing) {
        for (const subscriber of listen.subscribers) existing.subscribers.add(subscriber);
        this.notify(existing);
        continue;
      }
      Object.assign(listen, { data: null, complete: false, error: null });
      this.listens.set(listen.identity, listen);
      if (listen.tag) this.tags.set(listen.tag, listen);
      if (this.ready) this.sendListen(listen);
    }
  }

  // -- frames -------------------------------------------------------------------------------------

  /** A short all-digit frame announces how many frames the next message was split into. */
  receiveFrame(text) {
    if (this.fragments) {
      this.fragments.parts.push(text);
      if (this.fragments.parts.length < this.fragments.count) return;
      text = this.fragments.parts.join('');
      this.fragments = null;
    } else if (text.length <= 6 && /^[0-9]+$/.test(text)) {
      this.fragments = { count: Number(text), parts: [] };
      return;
    }
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      console.warn('canopy: ignoring a frame that is not JSON', text.slice(0, 200));
      return;
    }
    this.receive(message);
  }

  receive({ t, d }) {
    if (!d || typeof d !== 'object') return;
    if (t === 'c') {
      if (d.t === 'h') this.hello(d.d ?? {});
      else if (d.t === 's') {
        this.close();
        this.setStatus('offline', `server shut the connection: ${d.d}`);
      } else if (d.t === 'e') console.warn('canopy: server error', d.d);
    } else if (t === 'd') {
      if ('r' in d) {
        const handler = this.handlers.get(d.r);
        this.handlers.delete(d.r);
        handler?.(d.b ?? {});
      } else {
        this.push(d.a, d.b ?? {});
      }
    }
  }

  request(action, body, onResponse) {
    const r = this.nextRequest++;
    if (onResponse) this.handlers.set(r, onResponse);
    this.sendText(JSON.stringify({ t: 'd', d: { r, a: action, b: body } }));
  }

  /** Sends one message, split into a count frame and pieces when it is long; schedules the keepalive. */
  sendText(text) {
    const socket = this.socket;
    if (text.length <= MAX_FRAME_CHARS) {
      socket.send(text);
    } else {
      const pieces = [];
      for (let start = 0; start < text.length; ) {
        let end = Math.min(start + MAX_FRAME_CHARS, text.length);
        const last = text.charCodeAt(end - 1);
        if (end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1; // never split a surrogate pair
        pieces.push(text.slice(start, end));
        start = end;
      }
      socket.send(String(pieces.length));
      for (const piece of pieces) socket.send(piece);
    }
    clearTimeout(this.keepaliveTimer);
    this.keepaliveTimer = setTimeout(() => this.socket === socket && this.ready && this.sendText('0'), KEEPALIVE_MS);
  }

  // -- listens ------------------------------------------------------------------------------------

  listenBody(listen) {
    const body = { p: pathString(listen.segs) };
    if (listen.tag) Object.assign(body, { q: listen.query, t: listen.tag });
    return body;
  }

  sendListen(listen) {
    this.request('q', { ...this.listenBody(listen), h: '' }, (response) => {
      if (this.listens.get(listen.identity) !== listen) return;
      if (response.s === 'ok') {
        listen.complete = true;
      } else {
        listen.error = `${response.s}: ${typeof response.d === 'string' ? response.d : ''}`;
        this.forget(listen);
        this.denied.set(listen.identity, listen);
      }
      this.notify(listen);
    });
  }

  forget(listen) {
    this.listens.delete(listen.identity);
    if (listen.tag) this.tags.delete(listen.tag);
  }

  notify(listen) {
    for (const subscriber of [...listen.subscribers]) subscriber(listen);
  }

  push(action, body) {
    if (action === 'd' || action === 'm') {
      const at = splitPath(body.p ?? '');
      const writes = action === 'd'
        ? [[at, body.d ?? null]]
        : Object.entries(body.d ?? {}).map(([relative, value]) => [at.concat(splitPath(relative)), value]);
      // Tagged pushes feed their query only; untagged ones feed every whole-node listen they overlap.
      const targets = body.t !== undefined
        ? [this.tags.get(body.t)].filter(Boolean)
        : [...this.listens.values()].filter((listen) => !listen.tag);
      for (const listen of targets) this.apply(listen, writes);
    } else if (action === 'c') {
      this.revoke(splitPath(body.p ?? ''), body.q?.[0]);
    } else if (action === 'ac') {
      this.close();
      this.setStatus('offline', 'credential revoked');
      this.onAuthError(body.d || body.s);
    }
  }

  /** Applies [path, value] writes that overlap the listen to its data. */
  apply(listen, writes) {
    let data = listen.data;
    for (const [path, value] of writes) {
      if (isPrefix(listen.segs, path)) data = setAt(data, path.slice(listen.segs.length), value);
      else if (isPrefix(path, listen.segs)) data = setAt(null, [], getAt(value, listen.segs.slice(path.length)));
    }
    if (data === listen.data) return;
    listen.data = data;
    this.notify(listen);
  }

  /** The server withdrew a listen (permission lost). */
  revoke(segs, query) {
    for (const listen of [...this.listens.values()]) {
      const sameQuery = query ? deepEqual(listen.query, query) : !listen.tag;
      if (pathString(listen.segs) !== pathString(segs) || !sameQuery) continue;
      listen.error = 'permission_denied: the server revoked this listen';
      this.forget(listen);
      this.denied.set(listen.identity, listen);
      this.notify(listen);
    }
  }

  // -- writes -------------------------------------------------------------------------------------

  write(action, body) {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new Error('connection closed'));
      const write = { action, body, resolve, reject };
      this.writes.push(write);
      if (this.ready) this.sendWrite(write);
    });
  }

  sendWrite(write) {
    this.request(write.action, write.body, (response) => {
      this.writes = this.writes.filter((other) => other !== write);
      if (response.s === 'ok') write.resolve();
      else write.reject(new Error(`${response.s}: ${typeof response.d === 'string' ? response.d : ''}`));
    });
  }
}
