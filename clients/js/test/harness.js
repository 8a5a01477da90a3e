// What herald.js's unit tests run it against: herald.js itself, unchanged, run
// as a browser runs a plain <script> (a function of `window`, as bench/storm.js
// runs it), with a stand-in window, a fake socket.io and a clock, timers and
// randomness the test controls. Nothing here talks to a server.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const SOURCE_PATH = path.join(__dirname, '..', 'herald.js');
const SOURCE = fs.readFileSync(SOURCE_PATH, 'utf8');

// socket.io's socket, as far as herald.js uses it. The test plays the server:
// accept(), fail() (no server there), refuse(message, data), drop(reason),
// fire(event, ...) for what the server sends.
class FakeSocket {
  constructor(url, options) {
    this.url = url;
    this.options = options;
    this.handlers = {};
    this.connected = false;
    this.active = true;    // socket.io: still trying (not refused, not closed)
    this.connects = 0;     // socket.connect() calls: retries, after the first open
    this.emitted = [];     // {event, payload, ack} of every request the client made
    this.io = {engine: null};
  }

  on(name, handler) {
    (this.handlers[name] = this.handlers[name] || []).push(handler);
    return this;
  }

  fire(name, ...args) {
    for (const handler of (this.handlers[name] || []).slice()) handler(...args);
  }

  connect() {
    this.connects++;
    this.active = true;
    return this;
  }

  disconnect() {
    const was = this.connected;
    this.connected = false;
    this.active = false;
    if (was) this.fire('disconnect', 'io client disconnect');
    return this;
  }

  timeout() {
    return {emit: (event, payload, ack) => { this.emitted.push({event, payload, ack}); }};
  }

  // What the client sends as its handshake's `auth` ({token, last_id}).
  auth() {
    return new Promise((resolve) => this.options.auth(resolve));
  }

  accept() {
    this.connected = true;
    this.fire('connect');
  }

  fail() {
    this.active = true;
    this.fire('connect_error', new Error('xhr poll error'));
  }

  refuse(message, data) {
    this.active = false;
    const error = new Error(message);
    if (data) error.data = data;
    this.fire('connect_error', error);
  }

  drop(reason) {
    this.connected = false;
    this.fire('disconnect', reason || 'transport close');
  }
}

// ---- A page: a minimal DOM, as far as herald.js uses one ----

// A DOM event as CustomEvent makes one: type, detail, bubbles; dispatchEvent
// sets target and currentTarget.
class FakeCustomEvent {
  constructor(type, init = {}) {
    this.type = type;
    this.detail = init.detail;
    this.bubbles = !!init.bubbles;
    this.target = null;
    this.currentTarget = null;
  }
}

// An element (or the document): attributes, children, listeners. Its
// dispatchEvent calls the listeners, then the parent's when the event bubbles;
// unlike a browser's, a listener's throw comes out of it (the worst a page's
// stand-in or an old browser may do).
class FakeNode {
  constructor(tagName, ownerDocument) {
    this.tagName = tagName;
    this.nodeType = 1;
    this.ownerDocument = ownerDocument;
    this.attributes = {};
    this.childNodes = [];
    this.parentNode = null;
    this.listeners = {};
    this.id = '';
    this.innerHTML = '';
  }

  setAttribute(name, value) {
    this.attributes[name] = String(value);
    if (name === 'id') this.id = String(value);
  }
  getAttribute(name) { return name in this.attributes ? this.attributes[name] : null; }
  hasAttribute(name) { return name in this.attributes; }

  appendChild(child) {
    child.parentNode = this;
    this.childNodes.push(child);
    if (this.ownerDocument && this.ownerDocument.appended) this.ownerDocument.appended(child);
    return child;
  }
  removeChild(child) {
    this.childNodes = this.childNodes.filter((c) => c !== child);
    child.parentNode = null;
    return child;
  }

  addEventListener(name, listener) { (this.listeners[name] = this.listeners[name] || []).push(listener); }
  removeEventListener(name, listener) {
    this.listeners[name] = (this.listeners[name] || []).filter((l) => l !== listener);
  }
  dispatchEvent(event) {
    if (!event.target) event.target = this;
    event.currentTarget = this;
    for (const listener of (this.listeners[event.type] || []).slice()) listener(event);
    if (event.bubbles && this.parentNode) this.parentNode.dispatchEvent(event);
    return true;
  }
}

// A document: <html> with a head and (unless body: false) a body, <meta> tags
// from `meta` ([[name, content], ...]), a title, and script tags that load only
// when the test says so: `scripts` are those appended, each with load() (runs
// `define`, if given, then onload) and fail() (onerror).
function fakeDocument(options = {}) {
  const document = new FakeNode('#document', null);
  document.nodeType = 9;
  document.ownerDocument = document;
  document.title = options.title || 'Board';
  document.scripts = [];
  document.appended = (node) => {
    if (node.tagName !== 'script') return;
    node.load = (define) => {
      if (define) define();
      node.onload();
    };
    node.fail = () => node.onerror();
    document.scripts.push(node);
  };
  document.createElement = (tag) => new FakeNode(tag.toLowerCase(), document);
  const html = document.documentElement = new FakeNode('html', document);
  html.parentNode = document;
  document.head = html.appendChild(document.createElement('head'));
  for (const [name, content] of options.meta || []) {
    const meta = document.createElement('meta');
    meta.setAttribute('name', name);
    if (content != null) meta.setAttribute('content', content);
    document.head.appendChild(meta);
  }
  document.body = options.body === false ? null : html.appendChild(document.createElement('body'));
  if (document.body) document.body.innerHTML = options.html || '';
  // Only the selectors herald.js asks: meta[name="..."].
  document.querySelectorAll = (selector) => {
    const match = /^meta\[name="([^"]+)"\]$/.exec(selector);
    if (!match) throw new Error('fake document: no selector ' + selector);
    return document.head.childNodes.filter((n) => n.tagName === 'meta' && n.getAttribute('name') === match[1]);
  };
  document.getElementById = (id) => {
    const walk = (node) => {
      if (node.id === id) return node;
      for (const child of node.childNodes) {
        const found = walk(child);
        if (found) return found;
      }
      return null;
    };
    return walk(html);
  };
  return document;
}

// DOMParser, as far as a refresh uses it: the <title> and <body> of an HTML
// text, the body a FakeNode whose innerHTML is what was between its tags.
class FakeDOMParser {
  parseFromString(text, type) {
    if (type !== 'text/html') throw new Error('fake DOMParser: ' + type);
    const parsed = fakeDocument({body: false});
    const title = /<title>([\s\S]*?)<\/title>/.exec(text);
    parsed.title = title ? title[1] : '';
    const body = /<body[^>]*>([\s\S]*?)<\/body>/.exec(text);
    parsed.body = parsed.documentElement.appendChild(parsed.createElement('body'));
    parsed.body.innerHTML = body ? body[1] : text;
    return parsed;
  }
}

// Idiomorph, as far as herald.js uses it: morph(old, new, options) records the
// call and makes old's innerHTML new's.
function fakeIdiomorph() {
  const calls = [];
  return {
    calls,
    morph(oldNode, newNode, options) {
      calls.push({oldNode, newNode, options});
      oldNode.innerHTML = newNode.innerHTML;
      return [];
    }
  };
}

// A localStorage over a Map; `broken` makes every call throw (private mode).
function fakeStorage(broken) {
  const items = new Map();
  const guard = () => { if (broken) throw new Error('SecurityError'); };
  return {
    items,
    getItem(key) { guard(); return items.has(key) ? items.get(key) : null; },
    setItem(key, value) { guard(); items.set(key, String(value)); },
    removeItem(key) { guard(); items.delete(key); }
  };
}

// Load herald.js into a fresh stand-in window. Options: random (a function, or
// a list of values used in turn; 0.5 by default), now (ms), localStorage,
// Backbone, fetch, onLine, io (false: socket.io-client is not on the page;
// `env.io` is what loading it would define), document (true, or
// fakeDocument's options: a page, with CustomEvent and DOMParser), Idiomorph.
// Returns {Herald, window, io, sockets, timers, clock, document, ...};
// `timers.pending()` are the set timeouts not cleared or run yet.
function loadHerald(options = {}) {
  const sockets = [];
  const io = (url, socketOptions) => {
    const socket = new FakeSocket(url, socketOptions);
    sockets.push(socket);
    return socket;
  };

  const clock = {now: options.now || 1700000000000};
  const FakeDate = {now: () => clock.now};

  let draws = options.random === undefined ? 0.5 : options.random;
  const FakeMath = Object.create(Math);
  FakeMath.random = () => {
    if (typeof draws === 'function') return draws();
    if (Array.isArray(draws)) return draws.length > 1 ? draws.shift() : draws[0];
    return draws;
  };

  const all = [];
  const timers = {
    all,
    pending: () => all.filter((t) => !t.cleared && !t.ran),
    last: () => all[all.length - 1],
    // Run the pending timers (in the order they would fire).
    runAll() {
      const due = timers.pending().sort((a, b) => a.delay - b.delay);
      for (const timer of due) { timer.ran = true; timer.callback(); }
    }
  };
  const fakeSetTimeout = (callback, delay) => {
    const timer = {callback, delay, cleared: false, ran: false};
    all.push(timer);
    return timer;
  };
  const fakeClearTimeout = (timer) => { if (timer) timer.cleared = true; };

  const listeners = {};
  const window = {
    URL,
    atob,
    location: {href: 'https://app.example/board'},
    navigator: {onLine: options.onLine !== false},
    localStorage: options.localStorage || fakeStorage(),
    addEventListener(name, handler) { (listeners[name] = listeners[name] || []).push(handler); },
    removeEventListener(name, handler) {
      listeners[name] = (listeners[name] || []).filter((h) => h !== handler);
    },
    dispatch(name) { for (const handler of (listeners[name] || []).slice()) handler(); }
  };
  if (options.io !== false) window.io = io;
  if (options.Backbone) window.Backbone = options.Backbone;
  if (options.fetch) window.fetch = options.fetch;
  let document = null;
  if (options.document) {
    document = fakeDocument(options.document === true ? {} : options.document);
    window.document = document;
    window.CustomEvent = FakeCustomEvent;
    window.DOMParser = FakeDOMParser;
  }
  if (options.Idiomorph) window.Idiomorph = options.Idiomorph;

  // The file's own text, as a function of `window`; setTimeout, clearTimeout,
  // Date and Math are the test's for this copy only.
  new Function('window', 'setTimeout', 'clearTimeout', 'Date', 'Math', SOURCE)(
    window, fakeSetTimeout, fakeClearTimeout, FakeDate, FakeMath);

  return {
    Herald: window.Herald,
    window,
    io,
    sockets,
    timers,
    clock,
    document,
    setRandom(value) { draws = value; }
  };
}

// Let promise callbacks run (herald.js starts on the next tick, tokens are promises).
function flush() {
  return new Promise((resolve) => setImmediate(resolve));
}

// Connect a client (token 'T' unless given a token or getToken) and wait
// until its socket is open (not yet connected).
async function connected(env, options = {}) {
  const defaults = options.token || options.getToken ? {} : {token: 'T'};
  const client = env.Herald.connect(Object.assign(defaults, options));
  await flush();
  return {client, socket: env.sockets[env.sockets.length - 1]};
}

// A token shaped like a JWT (unsigned: herald.js only reads its claims).
function jwt(claims) {
  const encode = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return encode({alg: 'none'}) + '.' + encode(claims) + '.sig';
}

// Every event the client's dispatcher triggers, as [name, ...args].
function record(client) {
  const events = [];
  const trigger = client.dispatcher.trigger;
  client.dispatcher.trigger = function (...args) {
    events.push(args);
    return trigger.apply(this, args);
  };
  return events;
}

// A fetch the test answers by hand: each call waits in `requests` for
// answer(reply, more): a JSON body or an HTML text (200), a status (an `error`
// body), or 'down' (no answer: fetch rejects).
function manualFetch() {
  const fetch = (url, init) => new Promise((resolve, reject) => {
    const parsed = new URL(url);
    fetch.requests.push({
      url: parsed,
      href: String(url),
      init,
      path: parsed.pathname,
      params: Object.fromEntries(parsed.searchParams),
      token: init && init.headers && init.headers.Authorization,
      answer(reply, more) {
        this.answered = true;
        if (reply === 'down') return reject(new TypeError('Failed to fetch'));
        const status = typeof reply === 'number' ? reply : 200;
        const body = status === 200 ? reply : {error: 'the server says ' + status};
        resolve(Object.assign({
          status,
          ok: status < 400,
          redirected: false,
          url: String(url),
          json: () => Promise.resolve(body),
          text: () => Promise.resolve(typeof body === 'string' ? body : JSON.stringify(body))
        }, more));  // more: {redirected: true, url} for an answer that came by a redirect
      }
    });
  });
  fetch.requests = [];
  return fetch;
}

module.exports = {SOURCE, SOURCE_PATH, loadHerald, flush, connected, jwt, record, fakeStorage, FakeSocket,
                  fakeDocument, fakeIdiomorph, FakeCustomEvent, manualFetch};
