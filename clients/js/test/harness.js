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
// Backbone, fetch, onLine. Returns {Herald, window, io, sockets, timers, clock,
// flush, ...}; `timers.pending()` are the set timeouts not cleared or run yet.
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
    io,
    location: {href: 'https://app.example/board'},
    navigator: {onLine: options.onLine !== false},
    localStorage: options.localStorage || fakeStorage(),
    addEventListener(name, handler) { (listeners[name] = listeners[name] || []).push(handler); },
    removeEventListener(name, handler) {
      listeners[name] = (listeners[name] || []).filter((h) => h !== handler);
    },
    dispatch(name) { for (const handler of (listeners[name] || []).slice()) handler(); }
  };
  if (options.Backbone) window.Backbone = options.Backbone;
  if (options.fetch) window.fetch = options.fetch;

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

module.exports = {SOURCE, SOURCE_PATH, loadHerald, flush, connected, jwt, record, fakeStorage, FakeSocket};
